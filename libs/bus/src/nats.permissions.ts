import type { MessageType } from '@chorus/envelope';
import type { BusOptions } from './bus.options';
import { ALL_MESSAGE_TYPES, durableName } from './jetstream.consumer';

/** What one NATS user may publish and subscribe to. */
export interface Permissions {
  publish: string[];
  /** Subjects refused even where `publish` allows them (nats-server's `deny`, which wins over `allow`). */
  publishDeny?: string[];
  subscribe: string[];
}

/** The apps that connect to NATS, each as its own user in a secured deployment. */
export const SERVICE_USERS = ['hub', 'ingress', 'intent', 'planner', 'search', 'responder', 'profile', 'cli'] as const;
export type ServiceUser = (typeof SERVICE_USERS)[number];

/**
 * The reply inboxes of a service's connection (`inboxPrefix`, set by busOptionsFor): its user may
 * subscribe to these alone, not to `_INBOX.>`, through which any service read every other one's
 * replies (every tenant's workflow records and envelopes, as the hub and JetStream answered the ingress).
 */
export function serviceInboxPrefix(service: ServiceUser): string {
  return `_INBOX.chorus-${service}`;
}

/** The agents that consume one message type and own (publish) the next. */
const PIPELINE: Record<'intent' | 'planner' | 'search' | 'responder', { consumes: MessageType; owns: MessageType }> = {
  intent: { consumes: 'query', owns: 'classification_result' },
  planner: { consumes: 'classification_result', owns: 'execution_plan' },
  search: { consumes: 'execution_plan', owns: 'tool_results' },
  responder: { consumes: 'tool_results', owns: 'response' },
};

/**
 * Least privilege per service: each may publish only the message types it owns (plus failure
 * reports, and dead letters and duplicate notices where it can have any: the profiles, which publish
 * no envelope, none), use only its own durable consumers, and only the
 * hub administers streams and buckets. Rendered into infra/nats/auth.conf by `npm run nats:auth`.
 */
export function servicePermissions(bus: Pick<BusOptions, 'workflowStream' | 'deadLetterStream' | 'duplicateStream'>, hub: { ledgerBucket: string; ledgerEventsStream: string }): Record<ServiceUser, Permissions> {
  const WF = bus.workflowStream;
  const streams = [bus.workflowStream, bus.deadLetterStream, bus.duplicateStream];
  const common: Permissions = {
    publish: [
      '$JS.API.INFO',
      ...streams.map((s) => `$JS.API.STREAM.INFO.${s}`),
      '$SRV.>', // discovery requests (agents and profiles register as NATS services)
    ],
    subscribe: ['$SRV.>', `chorus.wf.*.status_update.*`],
  };
  // An agent's own durable consumer: it also deletes it, to replace one made again as something else under its name.
  const durable = (name: string, stream = WF) => [
    `$JS.API.CONSUMER.INFO.${stream}.${name}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${name}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${name}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${name}`,
    `$JS.API.CONSUMER.DELETE.${stream}.${name}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`,
    `$JS.ACK.${stream}.${name}.>`,
  ];
  // Ordered consumers (history, KV reads) are ephemeral, each named by its client, and deleted when done.
  // NATS matches whole tokens only, so these allow any name: `notDurables` takes the Chorus durables' back.
  // The unnamed create subject is left out: a config naming an existing consumer there updates it.
  const readers = (stream: string) => [`$JS.API.CONSUMER.CREATE.${stream}.>`, `$JS.API.CONSUMER.INFO.${stream}.*`, `$JS.API.CONSUMER.DELETE.${stream}.*`];
  // The agents' and the hub's durables, which a reader's user must not delete, make or change: one made
  // again as a push consumer of other subjects left its agent pulling from nothing.
  const wfDurables = [...Object.entries(PIPELINE).map(([name, p]) => durableName(name, p.consumes)), durableName('hub', ALL_MESSAGE_TYPES)];
  const notDurables = wfDurables.flatMap((name) => [
    `$JS.API.CONSUMER.CREATE.${WF}.${name}`,
    `$JS.API.CONSUMER.CREATE.${WF}.${name}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${WF}.${name}`,
    `$JS.API.CONSUMER.DELETE.${WF}.${name}`,
  ]);
  const discovery = { publish: ['chorus.profile.*.search', 'chorus.profile.*.documents'], subscribe: ['chorus.profile.announce'] };
  const merge = (...parts: Array<Partial<Permissions>>): Permissions => {
    const deny = [...new Set(parts.flatMap((p) => p.publishDeny ?? []))];
    return {
      publish: [...new Set(parts.flatMap((p) => p.publish ?? []))],
      ...(deny.length > 0 ? { publishDeny: deny } : {}),
      subscribe: [...new Set(parts.flatMap((p) => p.subscribe ?? []))],
    };
  };
  // Notices of publishes the stream dropped as duplicates: from whoever publishes workflow envelopes.
  const duplicates = ['chorus.dup.>'];
  // Dead letters: from whichever consumer of the workflow stream rejects an envelope (the agents, the hub).
  const deadLetters = ['chorus.dlq.>'];
  const agent = (name: keyof typeof PIPELINE, extra: Partial<Permissions> = {}) =>
    // The stream's message-get: how a workflow ended, for a backlog after a restart (FinishedWorkflows.lookup).
    merge(common, { publish: [`chorus.wf.*.${PIPELINE[name].owns}.*`, 'chorus.wf.*.status_update.*', `$JS.API.STREAM.MSG.GET.${WF}`, ...duplicates, ...deadLetters, ...durable(durableName(name, PIPELINE[name].consumes))] }, extra);
  const kvBuckets = [hub.ledgerBucket, 'chorus_leases'];
  const hubStreams = [...streams, hub.ledgerEventsStream, ...kvBuckets.map((b) => `KV_${b}`)];
  const client = merge(common, {
    // Reads of one message by subject (the last query of a workflow id: `ChorusClient.find`).
    publish: ['chorus.wf.*.query.*', 'chorus.wf.*.orchestration_command.*', 'chorus.hub.*', `$JS.API.STREAM.MSG.GET.${WF}`, ...duplicates, ...readers(WF)],
    publishDeny: notDurables,
    subscribe: ['chorus.wf.>'],
  });
  const users: Record<ServiceUser, Permissions> = {
    // The intent agent asks the profiles' vocabulary lookup (VOCABULARY_SUBJECT of @chorus/profiles) for likely typos.
    intent: agent('intent', { publish: ['chorus.profile.vocabulary'] }),
    planner: agent('planner', { subscribe: discovery.subscribe }),
    search: agent('search', discovery),
    responder: agent('responder'),
    profile: merge(common, { publish: ['chorus.profile.announce'], subscribe: ['chorus.profile.>'] }),
    hub: merge(common, {
      publish: [
        'chorus.wf.*.status_update.*',
        // The query of a retry (an orchestration_command `retry`), which the hub starts.
        'chorus.wf.*.query.*',
        `chorus.ledger.>`,
        ...duplicates,
        ...deadLetters,
        ...hubStreams.flatMap((s) => [`$JS.API.STREAM.CREATE.${s}`, `$JS.API.STREAM.UPDATE.${s}`, `$JS.API.STREAM.INFO.${s}`, `$JS.API.DIRECT.GET.${s}`, `$JS.API.DIRECT.GET.${s}.>`, `$JS.API.STREAM.MSG.GET.${s}`]),
        ...kvBuckets.map((b) => `$KV.${b}.>`),
        ...durable('hub_all'),
        ...durable('hub_duplicates', bus.duplicateStream),
        `$JS.API.CONSUMER.DELETE.${WF}.hub_all`,
        `$JS.API.CONSUMER.DELETE.${bus.duplicateStream}.hub_duplicates`,
        ...readers(WF),
        ...kvBuckets.flatMap((b) => readers(`KV_${b}`)),
      ],
      subscribe: ['chorus.hub.*'],
    }),
    ingress: merge(client, { publish: [`$JS.API.CONSUMER.LIST.${WF}`], subscribe: ['chorus.query'] }),
    // The operator's `chorus dead-letters` reads the dead-letter stream (and checks its read is complete with a message-get).
    cli: merge(client, { publish: [...readers(bus.deadLetterStream), `$JS.API.STREAM.MSG.GET.${bus.deadLetterStream}`] }),
  };
  for (const name of SERVICE_USERS) users[name].subscribe.unshift(`${serviceInboxPrefix(name)}.>`);
  return users;
}

/** The `authorization` block of a nats-server config for these users. */
export function renderAuthorization(users: Array<{ user: string; password: string; permissions: Permissions }>): string {
  const list = (items: string[]) => `[${items.map((s) => JSON.stringify(s)).join(', ')}]`;
  const entries = users.map(
    (u) =>
      `    {\n      user: ${JSON.stringify(u.user)}\n      password: ${JSON.stringify(u.password)}\n      permissions: {\n` +
      `        publish: { allow: ${list(u.permissions.publish)}${u.permissions.publishDeny ? `, deny: ${list(u.permissions.publishDeny)}` : ''} }\n` +
      `        subscribe: { allow: ${list(u.permissions.subscribe)} }\n` +
      // One process can host several services (two profiles): each answers a `$SRV` request.
      `        allow_responses: { max: 16, expires: "1m" }\n      }\n    }`,
  );
  return `authorization {\n  users: [\n${entries.join('\n')}\n  ]\n}\n`;
}
