import {
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type PubAck,
  type StoredMsg,
} from '@nats-io/jetstream';
import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  ALL_DEAD_LETTER_SUBJECTS,
  ALL_DUPLICATE_SUBJECTS,
  ALL_WORKFLOW_SUBJECTS,
  duplicateNoticeSubject,
  idempotencyKey,
  workflowSubject,
  type DuplicateNotice,
  type Envelope,
} from '@chorus/envelope';
import { Metrics, type Logger } from '@chorus/observability';
import type { BusOptions } from './bus.options';
import { EnvelopeTooLargeError, NatsUnreachableError, NoJetStreamError, StorageFullError } from './bus.errors';
import { ensureStream, type StreamSpec } from './stream.topology';
import { FinishedWorkflows } from './finished-workflows';
import { ChorusHeaders } from './headers';
import { releaseAnsweredRequestsCheaply } from './request-release';
import { coalesceSocketWrites } from './write-coalescing';
import { isRevisionConflict, isStorageExhausted, isTransient } from './transient-error';

/** The longest a publish is retried while JetStream has no leader to store it (a failover, a restart). */
const PUBLISH_RETRY_MS = 10_000;
/** How long `/ready` says "storage full" after a publish was refused for it (unless one succeeds). */
const STORAGE_FULL_NOT_READY_MS = 30_000;

export interface PublishOptions {
  /** Distinguishes several messages of one type from one agent in one workflow. */
  part?: string;
  /**
   * Report a publish the stream dropped as a duplicate to the hub (default true). The hub turns
   * this off for its own status updates, which it re-publishes on purpose after a restart; a client
   * with an idempotency key reports it itself ({@link Bus.reportDuplicate}) once it has checked the
   * request is the same.
   */
  reportDuplicate?: boolean;
  /**
   * Store it only if the stream holds nothing on its subject yet (JetStream's expected last subject
   * sequence 0), whatever its duplicate window: when it does, nothing is stored and the result is a
   * duplicate (inside the window, with the stored copy's `seq`; past it, `seq` 0). For a message
   * that must exist once for good, such as a retry's query.
   */
  firstOnSubject?: boolean;
  /**
   * Throw {@link StorageFullError} at once when JetStream has no room (a client's submission, which
   * hears a 503 now). Without it, a full store is retried as an outage is, within the same time,
   * then thrown as that error: an agent's step then has its deliveries to wait for room.
   */
  failWhenFull?: boolean;
}

export interface PublishResult {
  /** Stream sequence of the stored message. */
  seq: number;
  /** True when the stream dropped it as a re-publish of the same idempotency key. */
  duplicate: boolean;
  idempotencyKey: string;
}

const encoder = new TextEncoder();

/**
 * A connection to NATS with JetStream, and the only place that knows how Chorus lays out its
 * streams. Built fully by {@link Bus.connect}, then handed to whoever needs it.
 */
export class Bus {
  /** Between a disconnect and the reconnect that follows it (the client retries forever): `done` resolves then. */
  private reconnected: { done: Promise<true>; resolve: () => void } | undefined;
  /** When a publish was last refused for want of storage (cleared by one that is stored). */
  private storageFullAt: number | undefined;
  /** The calls of {@link shared} in flight, by key. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly options: BusOptions,
    readonly log: Logger,
    /** Workflows seen finishing, when this process runs agents (see {@link FinishedWorkflows}). */
    readonly finished: FinishedWorkflows | undefined,
    /** This process's Prometheus metrics, which the bus and its consumers record into. */
    readonly metrics: Metrics,
  ) {}

  static async connect(options: BusOptions, log: Logger, extras: { trackFinished?: boolean; metrics?: Metrics } = {}): Promise<Bus> {
    const nc = await connectNats(options);
    let jsm: JetStreamManager;
    try {
      jsm = await jetstreamManager(nc, { timeout: options.requestTimeoutMs });
    } catch (e) {
      await nc.close();
      throw new NoJetStreamError(options.servers, e);
    }
    const js = jetstream(nc, { timeout: options.requestTimeoutMs });
    const bus = new Bus(nc, js, jsm, options, log, extras.trackFinished ? new FinishedWorkflows(nc, { jsm, stream: options.workflowStream }) : undefined, extras.metrics ?? new Metrics(options.name));
    bus.watchStatus();
    return bus;
  }

  /** Creates the workflow and dead-letter streams, or brings their settings up to date. */
  async ensureTopology(): Promise<void> {
    await this.ensureStream({
      name: this.options.workflowStream,
      subjects: [ALL_WORKFLOW_SUBJECTS],
      duplicate_window: nanos(this.options.duplicateWindowMs),
      max_age: nanos(this.options.workflowRetentionMs),
      max_bytes: this.options.workflowMaxBytes,
      maxBytesSetting: 'CHORUS_STREAM_MAX_BYTES',
    });
    await this.ensureStream({
      name: this.options.duplicateStream,
      subjects: [ALL_DUPLICATE_SUBJECTS],
      duplicate_window: nanos(this.options.duplicateWindowMs),
      max_age: nanos(this.options.workflowRetentionMs),
    });
    await this.ensureStream({
      name: this.options.deadLetterStream,
      subjects: [ALL_DEAD_LETTER_SUBJECTS],
      duplicate_window: nanos(this.options.duplicateWindowMs),
      max_age: nanos(this.options.deadLetterRetentionMs),
      max_bytes: this.options.deadLetterMaxBytes,
      maxBytesSetting: 'CHORUS_DEAD_LETTER_MAX_BYTES',
    });
  }

  /** Creates a stream, or brings its limits up to date (see {@link ensureStream}). */
  ensureStream(config: StreamSpec): Promise<void> {
    return ensureStream(this.jsm, this.options, config);
  }

  /**
   * Publishes an envelope on its workflow subject with `Nats-Msg-Id` = its idempotency key and
   * its ids and trace context mirrored in headers; resolves once the stream has stored it.
   */
  async publish(envelope: Envelope, options: PublishOptions = {}): Promise<PublishResult> {
    const key = idempotencyKey(envelope.correlation_id, envelope.message_type, envelope.agent, options.part);
    const subject = workflowSubject(envelope.tenant_id, envelope.message_type, envelope.correlation_id);
    const h = natsHeaders();
    h.set(ChorusHeaders.CorrelationId, envelope.correlation_id);
    h.set(ChorusHeaders.MessageId, envelope.message_id);
    if (envelope.causation_id) h.set(ChorusHeaders.CausationId, envelope.causation_id);
    h.set(ChorusHeaders.MessageType, envelope.message_type);
    h.set(ChorusHeaders.Agent, envelope.agent);
    if (envelope.traceparent) h.set(ChorusHeaders.Traceparent, envelope.traceparent);
    const data = encoder.encode(JSON.stringify(envelope));
    // While a cluster elects a new stream leader, or the server restarts, JetStream has no responder
    // for a few seconds: retry with the same Nats-Msg-Id (so a publish that was stored after all is
    // not stored twice) until the envelope's deadline, within PUBLISH_RETRY_MS.
    const retryUntil = Math.min(Date.now() + PUBLISH_RETRY_MS, Date.parse(envelope.deadline) || Infinity);
    let ack: PubAck | undefined;
    let retried = false;
    for (let attempt = 0; !ack; attempt++) {
      try {
        ack = await this.js.publish(subject, data, { msgID: key, headers: h, ...(options.firstOnSubject ? { expect: { lastSubjectSequence: 0 } } : {}) });
      } catch (e) {
        if (options.firstOnSubject && isRevisionConflict(e)) return { seq: 0, duplicate: true, idempotencyKey: key };
        if (/max_payload/i.test(String((e as Error)?.message))) throw new EnvelopeTooLargeError(subject, data.length, this.nc.info?.max_payload);
        const full = isStorageExhausted(e);
        if (full) this.storageFullAt = Date.now();
        const delay = Math.min(1000, 50 * 2 ** attempt);
        if ((full && options.failWhenFull) || !isTransient(e) || isRevisionConflict(e) || Date.now() + delay > retryUntil || this.nc.isClosed()) {
          throw full ? new StorageFullError(subject, e) : e;
        }
        // nats.js names a stream with no leader for the moment (an election after a node was lost)
        // "jetstream is not enabled"; say what it most likely is.
        const why = full ? 'publish refused: JetStream storage full; retrying' : 'publish not acknowledged (NATS away, or the stream electing a leader); retrying';
        this.log.warn({ err: e, correlation_id: envelope.correlation_id, message_type: envelope.message_type, attempt: attempt + 1, retry_in_ms: delay }, why);
        retried = true;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    // Stored (a duplicate stores nothing, and says nothing of the room left).
    if (!ack.duplicate) this.storageFullAt = undefined;
    // After a retry, the stream may hold this very publish from an attempt whose ack was lost.
    if (retried && ack.duplicate) return { seq: ack.seq, duplicate: false, idempotencyKey: key };
    const result = { seq: ack.seq, duplicate: ack.duplicate, idempotencyKey: key };
    if (ack.duplicate && options.reportDuplicate !== false) await this.reportDuplicate(envelope, result);
    return result;
  }

  /** The stream dropped a re-publish silently; tell the hub, which counts duplicates per workflow. */
  async reportDuplicate(envelope: Envelope, { idempotencyKey: key, seq: storedSeq }: PublishResult): Promise<void> {
    this.metrics.duplicatesReported.inc();
    const notice: DuplicateNotice = {
      idempotency_key: key,
      correlation_id: envelope.correlation_id,
      tenant_id: envelope.tenant_id,
      message_type: envelope.message_type,
      agent: envelope.agent,
      message_id: envelope.message_id,
      stored_seq: storedSeq,
      dropped_at: new Date().toISOString(),
    };
    const subject = duplicateNoticeSubject(envelope.tenant_id, envelope.message_type, envelope.correlation_id);
    // No Nats-Msg-Id: every dropped publish is its own notice, even of the very same envelope.
    await this.js.publish(subject, encoder.encode(JSON.stringify(notice)));
  }

  /** The body of the last message stored on `subject` in the workflow stream, or null if there is none. */
  async lastStored(subject: string): Promise<Uint8Array | null> {
    return (await this.lastStoredMessage(subject))?.data ?? null;
  }

  /** The message the workflow stream holds at `seq`, or null if it holds none there (any more). */
  storedAt(seq: number): Promise<StoredMsg | null> {
    return this.getStored({ seq });
  }

  /** When the last message on `subject` was stored in the workflow stream, or null if none was. */
  async lastStoredAt(subject: string): Promise<Date | null> {
    return (await this.lastStoredMessage(subject))?.time ?? null;
  }

  /** The last message stored on `subject` in the workflow stream, or null if there is none. */
  lastStoredMessage(subject: string): Promise<StoredMsg | null> {
    return this.getStored({ last_by_subj: subject });
  }

  private async getStored(query: { seq: number } | { last_by_subj: string }): Promise<StoredMsg | null> {
    try {
      return (await this.jsm.streams.getMessage(this.options.workflowStream, query)) ?? null;
    } catch (e) {
      if (/no message found|not found/i.test(String((e as Error).message))) return null;
      throw e;
    }
  }

  /** True between a disconnect from NATS and the reconnect that follows (the client retries forever). */
  get reconnecting(): boolean {
    return this.reconnected !== undefined;
  }

  /**
   * Whether NATS is connected, waiting up to `ms` for a reconnect in progress: a blip (a cluster's
   * client moving to another server) passes, an outage is known within `ms`.
   */
  async connectedWithin(ms: number): Promise<boolean> {
    const waiting = this.reconnected;
    if (!waiting) return true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([waiting.done, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One call of `start` for everyone in this process who asks under `key` while it is in flight;
   * each later asker starts a new one. For reads many callers make at the same moment (every
   * watcher of a workflow asks the hub whether it ended when it sees the end announced): a joiner
   * may get an answer to a question asked a moment before its own, so it is for reads a caller
   * asks again until they say what it waits for.
   */
  shared<T>(key: string, start: () => Promise<T>): Promise<T> {
    let call = this.inFlight.get(key) as Promise<T> | undefined;
    if (!call) {
      call = start().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, call);
    }
    return call;
  }

  /** Readiness: connected, and the workflow stream answers. */
  async readiness(): Promise<{ ready: boolean; detail: Record<string, unknown> }> {
    if (this.nc.isClosed()) return { ready: false, detail: { nats: 'closed' } };
    // While reconnecting, a request would wait for its timeout; a probe needs its answer now.
    if (this.reconnecting) return { ready: false, detail: { nats: 'disconnected, reconnecting' } };
    // Nothing can be submitted while JetStream refuses to store: said for a while after a publish was
    // refused (a probe cannot see the server's storage; a publish that succeeds clears it at once).
    const fullFor = this.storageFullAt === undefined ? Infinity : Date.now() - this.storageFullAt;
    if (fullFor < STORAGE_FULL_NOT_READY_MS) {
      return { ready: false, detail: { nats: this.nc.getServer(), stream: `JetStream storage full: a publish was refused ${Math.round(fullFor / 1000)} s ago (insufficient resources)` } };
    }
    try {
      const { cluster } = await this.jsm.streams.info(this.options.workflowStream);
      // A replicated stream that lost its quorum still answers this from a server that has a copy,
      // while nothing can be stored in it (a submission then waits ~10 s for its 503).
      // (Without a leader, the server answering lists itself among the replicas: no count is needed.)
      const replicas = cluster?.replicas ?? [];
      const healthy = 1 + replicas.filter((r) => r.current && !r.offline).length;
      if (cluster && (!cluster.leader || healthy < Math.floor((replicas.length + 1) / 2) + 1)) {
        const why = cluster.leader ? `${healthy} of ${replicas.length + 1} replicas current` : 'no leader';
        return { ready: false, detail: { nats: this.nc.getServer(), stream: `${this.options.workflowStream} has no quorum: ${why}` } };
      }
      return { ready: true, detail: { nats: this.nc.getServer(), stream: this.options.workflowStream } };
    } catch (e) {
      return { ready: false, detail: { nats: this.nc.getServer(), stream: `unreachable: ${(e as Error).message}` } };
    }
  }

  /** Resolves when the connection closes; rejects with the reason if it closed on an error. */
  closed(): Promise<void | Error> {
    return this.nc.closed();
  }

  /** Drains subscriptions and pending publishes, then closes. */
  async close(): Promise<void> {
    this.finished?.close();
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch (e) {
      this.log.warn({ err: e }, 'drain failed; closing');
      await this.nc.close();
    }
  }

  private watchStatus(): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' && !this.reconnected) {
          let resolve!: () => void;
          this.reconnected = { done: new Promise<true>((r) => (resolve = () => r(true))), resolve };
        } else if (s.type === 'reconnect' && this.reconnected) {
          this.reconnected.resolve();
          this.reconnected = undefined;
        }
        if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
          this.log.warn({ nats_status: s.type, server: 'server' in s ? s.server : undefined }, `nats ${s.type}`);
        }
      }
    })().catch(() => undefined);
  }
}

async function connectNats(options: BusOptions): Promise<NatsConnection> {
  releaseAnsweredRequestsCheaply();
  coalesceSocketWrites();
  try {
    return await connect({
      servers: options.servers,
      name: options.name,
      user: options.user,
      pass: options.pass,
      token: options.token,
      ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: options.requestTimeoutMs,
      // Capturing a stack trace for every request (each JetStream publish is one) costs more than the
      // publish itself; our errors name the subject and the timeout instead.
      noAsyncTraces: true,
    });
  } catch (e) {
    throw new NatsUnreachableError(options.servers, e);
  }
}
