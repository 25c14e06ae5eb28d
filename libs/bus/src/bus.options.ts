/** How a process reaches NATS and where Chorus keeps its durable state. */
export interface BusOptions {
  /** NATS server URLs. */
  servers: string[];
  /** Connection name, shown by the server (`nats server report connections`). */
  name: string;
  /** Credentials, when the server requires them (infra/nats has per-service users). */
  user?: string;
  pass?: string;
  token?: string;
  /**
   * The subject prefix of this connection's reply inboxes (default `_INBOX`). With per-service
   * NATS users each service gets its own (`_INBOX.chorus-<service>`), the only inboxes its user may
   * subscribe to: with `_INBOX.>` any service could read every reply to every other one (the hub's
   * answers, the envelopes of every tenant delivered to the ingress's watches).
   */
  inboxPrefix?: string;
  /** The workflow stream, capturing `chorus.wf.>`. */
  workflowStream: string;
  /** The dead-letter stream, capturing `chorus.dlq.>`. */
  deadLetterStream: string;
  /** Notices of re-publishes the workflow stream dropped, capturing `chorus.dup.>`. */
  duplicateStream: string;
  /** How long the workflow stream drops a re-published `Nats-Msg-Id`. */
  duplicateWindowMs: number;
  /** How long envelopes stay in the workflow stream (the audit trail). */
  workflowRetentionMs: number;
  /** How long dead letters stay. */
  deadLetterRetentionMs: number;
  /**
   * The most bytes the workflow stream holds before its oldest messages go (-1: no limit but
   * retention). Not set: a new stream gets none, and an existing one keeps what it has.
   */
  workflowMaxBytes?: number;
  /** The same for the dead-letter stream. */
  deadLetterMaxBytes?: number;
  /** Replicas of streams and buckets: 1 on one server, 3 on a three-node cluster. */
  replicas: number;
  /** Milliseconds a JetStream API call or request may take before it fails. */
  requestTimeoutMs: number;
  /**
   * Create and update the streams (true), or only check they exist (false: a service whose NATS user
   * may not administer streams; the hub creates them).
   */
  manageTopology: boolean;
}

const DAY = 24 * 60 * 60 * 1000;

export function defaultBusOptions(): BusOptions {
  return {
    servers: ['nats://127.0.0.1:4222'],
    name: 'chorus',
    workflowStream: 'CHORUS_WF',
    deadLetterStream: 'CHORUS_DLQ',
    duplicateStream: 'CHORUS_DUP',
    duplicateWindowMs: 2 * 60 * 1000,
    workflowRetentionMs: 7 * DAY,
    deadLetterRetentionMs: 30 * DAY,
    replicas: 1,
    requestTimeoutMs: 5000,
    manageTopology: true,
  };
}

/** Options for one agent's durable consumer. */
export interface ConsumerOptions {
  /** The agent; its replicas share one durable consumer per message type. */
  agent: string;
  /** Envelopes handled at once by this process. */
  concurrency: number;
  /** Deliveries of one envelope before it is given up (a failed step). */
  maxDeliver: number;
  /**
   * Milliseconds the server waits for an ack before redelivering to another replica. Kept short so a
   * replica that dies is noticed quickly; a handler still working tells the server so every half of it.
   */
  ackWaitMs: number;
  /** Delay before the n-th redelivery of a retryable failure: base * 2^(n-1), capped. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Skip (ack without work) envelopes whose workflow deadline has passed. The hub does not. */
  skipExpired: boolean;
  /** Skip envelopes of workflows this process saw finish (cancelled, failed, …). The hub does not. */
  skipFinished: boolean;
  /** Take over a dead holder's in-flight envelopes first, in stream order (the single active hub). */
  resumeInOrder?: boolean;
  /** Unacknowledged deliveries the server allows across replicas; default max(1000, 4 × concurrency). */
  maxAckPending?: number;
  /** Report a step given up on the workflow (default true); the hub only dead-letters its own. */
  reportFailures?: boolean;
}

export function defaultConsumerOptions(agent: string): ConsumerOptions {
  return {
    agent,
    concurrency: 64,
    maxDeliver: 5,
    ackWaitMs: 5_000,
    retryBaseMs: 200,
    retryMaxMs: 5_000,
    skipExpired: true,
    skipFinished: true,
  };
}
