import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { serviceInboxPrefix, type BusOptions, type ConsumerOptions, type ServiceUser } from '@chorus/bus';
import { MAX_FUSION_WEIGHT, MAX_RANK_WINDOW, PROFILE_NAME_PATTERN, TENANT_ID_PATTERN, type CorrelationStrategy } from '@chorus/envelope';
import { ConfigError, EnvReader } from './env.parser';

/** Everything a Chorus process is configured with; parsed once in main.ts, frozen, passed down. */
export interface ChorusConfig {
  /** Where NATS was asked to be (NATS_URL); absent lets `npm start` find or start one. */
  natsUrl: string | undefined;
  bus: BusOptions;
  consumer: Omit<ConsumerOptions, 'agent'>;
  logLevel: string;
  /** The project's root (README.md and docs/ for the default corpus, `.chorus/` for local data). */
  root: string;
  dataDir: string;
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    /** API key → tenant. Empty: development mode, no key needed, the tenant comes from the request. */
    apiKeys: Record<string, string>;
  };
  workflow: {
    defaultDeadlineMs: number;
    maxDeadlineMs: number;
    defaultTopK: number;
    terminalGraceMs: number;
    /** How long after a workflow's deadline its watchers (SSE, A2A, `chorus watch`) wait for the hub to confirm its end. */
    watchGraceMs: number;
  };
  correlation: { strategy: CorrelationStrategy; secret: string };
  /** A JSONL corpus (`{"id","title","text"}` per line); absent means the project's own docs. */
  corpusPath: string | undefined;
  /** Profiles this deployment runs (and the planner may choose). */
  profiles: string[];
  /** Per-service NATS users (`CHORUS_NATS_CREDENTIALS`): each app connects as its own user. */
  credentials: Record<string, { user: string; pass: string }> | undefined;
  /** The ingress's address as clients reach it (the A2A agent card names it); its listen address otherwise. */
  publicUrl: string | undefined;
  /** The apps `npm start` runs in its one process (all of them by default). */
  apps: string[];
  /** Where an app without an HTTP server of its own serves /health, /ready and /metrics (off when absent). */
  ops: { host: string; port: number } | undefined;
  search: {
    rrfK: number;
    rankWindow: number;
    /** Per-profile RRF weights; a profile not listed weighs 1. */
    rrfWeights: Record<string, number>;
    profileTimeoutMs: number;
    /** A profile request not answered by then is sent again (another replica may answer); 0: never. */
    profileHedgeMs: number;
    responderReserveMs: number;
    /** Results carried with up to `documentChars` of their text: the ones an answer quotes. */
    leadDocuments: number;
    /** Characters of text of each of the lead results. */
    documentChars: number;
    /** Characters of text of every other result: its passage that best matches the query. */
    passageChars: number;
  };
  hub: {
    bucket: string;
    retentionMs: number;
    sweepIntervalMs: number;
    cacheSize: number;
    /** How long the ledger write of a running workflow waits for its next envelopes, to store them together. */
    lingerMs: number;
    /** A hub replica that stops renewing its lease for this long is replaced by a standby. */
    leaseMs: number;
    /** Workflows kept in the active hub's recent index (for listing). */
    recentCapacity: number;
    /** How far apart the processes' clocks may be; a takeover reads the ledger from that much earlier. */
    clockSkewMs: number;
    /** How far back the totals count. */
    totalsRetentionMs: number;
  };
}

/** Every app of the all-in-one launcher, in start order. */
export const ALL_APPS = ['profiles', 'hub', 'intent', 'planner', 'search', 'responder', 'ingress'] as const;

const SECOND = 1000;
const DAY = 24 * 60 * 60 * SECOND;

/** The largest CHORUS_MAX_DEADLINE_MS a deployment may set (one hour): what any request may ask for at most. */
export const DEADLINE_LIMIT_MS = 60 * 60 * SECOND;

/** Parses the environment into a frozen config; throws one ConfigError listing every bad variable. */
export function parseChorusConfig(env: Readonly<Record<string, string | undefined>>, cwd: string): Readonly<ChorusConfig> {
  const r = new EnvReader(env);
  const root = resolve(cwd, r.string('CHORUS_ROOT', '.'));
  const natsUrl = r.optional('NATS_URL');
  const replicas = r.int('CHORUS_REPLICAS', 1, 1, 5);
  const corpus = r.optional('CHORUS_CORPUS');
  const config: ChorusConfig = {
    natsUrl,
    bus: {
      servers: natsUrl ? natsUrl.split(',').map((s) => s.trim()) : ['nats://127.0.0.1:4222'],
      name: r.string('CHORUS_CONNECTION_NAME', 'chorus'),
      user: r.optional('NATS_USER'),
      pass: r.optional('NATS_PASS'),
      token: r.optional('NATS_TOKEN'),
      workflowStream: r.string('CHORUS_WORKFLOW_STREAM', 'CHORUS_WF'),
      deadLetterStream: r.string('CHORUS_DEAD_LETTER_STREAM', 'CHORUS_DLQ'),
      duplicateStream: r.string('CHORUS_DUPLICATE_STREAM', 'CHORUS_DUP'),
      duplicateWindowMs: r.int('CHORUS_DUPLICATE_WINDOW_MS', 120 * SECOND, SECOND, DAY),
      workflowRetentionMs: r.int('CHORUS_STREAM_RETENTION_MS', 7 * DAY, 60 * SECOND, 365 * DAY),
      deadLetterRetentionMs: r.int('CHORUS_DEAD_LETTER_RETENTION_MS', 30 * DAY, 60 * SECOND, 365 * DAY),
      workflowMaxBytes: r.byteLimit('CHORUS_STREAM_MAX_BYTES'),
      deadLetterMaxBytes: r.byteLimit('CHORUS_DEAD_LETTER_MAX_BYTES'),
      replicas,
      requestTimeoutMs: r.int('CHORUS_NATS_TIMEOUT_MS', 5 * SECOND, 100, 60 * SECOND),
      manageTopology: true,
    },
    consumer: {
      concurrency: r.int('CHORUS_CONCURRENCY', 64, 1, 4096),
      maxDeliver: r.int('CHORUS_MAX_DELIVER', 5, 1, 100),
      ackWaitMs: r.int('CHORUS_ACK_WAIT_MS', 5 * SECOND, SECOND, 10 * 60 * SECOND),
      retryBaseMs: r.int('CHORUS_RETRY_BASE_MS', 200, 1, 60 * SECOND),
      retryMaxMs: r.int('CHORUS_RETRY_MAX_MS', 5 * SECOND, 1, 10 * 60 * SECOND),
      skipExpired: true,
      skipFinished: true,
      maxAckPending: r.optional('CHORUS_MAX_ACK_PENDING') === undefined ? undefined : r.int('CHORUS_MAX_ACK_PENDING', 1000, 1, 1_000_000),
    },
    logLevel: r.oneOf('CHORUS_LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    root,
    dataDir: resolve(root, r.string('CHORUS_DATA_DIR', '.chorus')),
    http: {
      host: r.string('CHORUS_HTTP_HOST', '127.0.0.1'),
      port: r.int('CHORUS_HTTP_PORT', 3000, 0, 65535),
      bodyLimitBytes: r.int('CHORUS_HTTP_BODY_LIMIT', 64 * 1024, 1024, 16 * 1024 * 1024),
      apiKeys: parseApiKeys(r, root),
    },
    workflow: {
      defaultDeadlineMs: r.int('CHORUS_DEFAULT_DEADLINE_MS', 10 * SECOND, 100, 10 * 60 * SECOND),
      maxDeadlineMs: r.int('CHORUS_MAX_DEADLINE_MS', 5 * 60 * SECOND, 100, DEADLINE_LIMIT_MS),
      defaultTopK: r.int('CHORUS_DEFAULT_TOP_K', 10, 1, 100),
      terminalGraceMs: r.int('CHORUS_TERMINAL_GRACE_MS', 3 * SECOND, 0, 60 * SECOND),
      watchGraceMs: r.int('CHORUS_WATCH_GRACE_MS', 60 * SECOND, 10, 60 * 60 * SECOND),
    },
    correlation: {
      strategy: r.oneOf<CorrelationStrategy>('CHORUS_CORRELATION_STRATEGY', 'uuidv7', ['uuidv7', 'session']),
      // Without a configured secret each process draws its own: session ids then collapse only per process.
      secret: r.string('CHORUS_ID_SECRET', randomBytes(32).toString('hex')),
    },
    corpusPath: corpus ? (isAbsolute(corpus) ? corpus : resolve(root, corpus)) : undefined,
    profiles: r.list('CHORUS_PROFILES', ['bm25', 'trigram'], PROFILE_NAME_PATTERN, { set: true }),
    credentials: parseCredentials(r, root),
    publicUrl: r.optional('CHORUS_PUBLIC_URL')?.replace(/\/+$/, ''),
    ops: r.optional('CHORUS_OPS_PORT') === undefined
      ? undefined
      : { host: r.string('CHORUS_OPS_HOST', '127.0.0.1'), port: r.int('CHORUS_OPS_PORT', 0, 0, 65535) },
    // `profile` is the profile app's name where it runs alone (dist/apps/profile): taken for `profiles` here too.
    apps: [...new Set(r.list('CHORUS_APPS', [...ALL_APPS], new RegExp(`^(${ALL_APPS.join('|')}|profile)$`), { set: true, allowed: ALL_APPS }).map((a) => (a === 'profile' ? 'profiles' : a)))],
    search: {
      rrfK: r.number('CHORUS_RRF_K', 60, 0, 10_000),
      rankWindow: r.int('CHORUS_RANK_WINDOW', 100, 1, MAX_RANK_WINDOW),
      rrfWeights: r.weights('CHORUS_RRF_WEIGHTS', PROFILE_NAME_PATTERN, MAX_FUSION_WEIGHT),
      profileTimeoutMs: r.int('CHORUS_PROFILE_TIMEOUT_MS', 3 * SECOND, 10, 10 * 60 * SECOND),
      profileHedgeMs: r.int('CHORUS_PROFILE_HEDGE_MS', 500, 0, 10 * 60 * SECOND),
      responderReserveMs: r.int('CHORUS_RESPONDER_RESERVE_MS', 300, 0, 60 * SECOND),
      leadDocuments: r.int('CHORUS_LEAD_DOCUMENTS', 3, 0, 10_000),
      documentChars: r.int('CHORUS_DOCUMENT_CHARS', 2000, 100, 100_000),
      passageChars: r.int('CHORUS_PASSAGE_CHARS', 400, 50, 100_000),
    },
    hub: {
      bucket: r.string('CHORUS_LEDGER_BUCKET', 'chorus_workflows'),
      retentionMs: r.int('CHORUS_HUB_RETENTION_MS', DAY, SECOND, 365 * DAY),
      sweepIntervalMs: r.int('CHORUS_HUB_SWEEP_MS', 100, 10, 60 * SECOND),
      cacheSize: r.int('CHORUS_HUB_CACHE_SIZE', 2_000, 10, 10_000_000),
      lingerMs: r.int('CHORUS_HUB_LINGER_MS', 20, 0, 1000),
      leaseMs: r.int('CHORUS_HUB_LEASE_MS', 3 * SECOND, 300, 60 * SECOND),
      recentCapacity: r.int('CHORUS_HUB_RECENT', 10_000, 10, 1_000_000),
      clockSkewMs: r.int('CHORUS_HUB_CLOCK_SKEW_MS', 60 * SECOND, 0, 60 * 60 * SECOND),
      totalsRetentionMs: r.int('CHORUS_HUB_TOTALS_RETENTION_MS', 30 * DAY, 60 * SECOND, 3650 * DAY),
    },
  };
  if (config.hub.retentionMs <= config.workflow.maxDeadlineMs) {
    r.problems.push('CHORUS_HUB_RETENTION_MS must exceed CHORUS_MAX_DEADLINE_MS: a workflow must outlive its deadline in the ledger');
  }
  if (config.workflow.watchGraceMs < config.hub.sweepIntervalMs) {
    r.problems.push('CHORUS_WATCH_GRACE_MS must not be less than CHORUS_HUB_SWEEP_MS: a watcher would give up before a running hub ends the workflow');
  }
  // JetStream refuses a stream whose duplicate window is longer than its age limit, with words that
  // name neither the stream nor the setting ("duplicates window can not be larger then max age").
  for (const [setting, ms] of [
    ['CHORUS_STREAM_RETENTION_MS', config.bus.workflowRetentionMs],
    ['CHORUS_DEAD_LETTER_RETENTION_MS', config.bus.deadLetterRetentionMs],
    ['CHORUS_HUB_TOTALS_RETENTION_MS', config.hub.totalsRetentionMs],
  ] as const) {
    if (config.bus.duplicateWindowMs > ms) {
      r.problems.push(`CHORUS_DUPLICATE_WINDOW_MS (${config.bus.duplicateWindowMs}) must not exceed ${setting} (${ms}): JetStream refuses a stream whose duplicate window outlasts its messages`);
    }
  }
  if (config.workflow.defaultDeadlineMs > config.workflow.maxDeadlineMs) {
    r.problems.push('CHORUS_DEFAULT_DEADLINE_MS must not exceed CHORUS_MAX_DEADLINE_MS');
  }
  const weights = config.search.rrfWeights;
  if (weights && config.profiles.every((p) => weights[p] === 0)) {
    // Every fused score would be 0: the results would come in an arbitrary (if deterministic) order.
    r.problems.push(`CHORUS_RRF_WEIGHTS gives every profile of CHORUS_PROFILES (${config.profiles.join(', ')}) weight 0: nothing would rank; give one a weight above 0`);
  }
  for (const server of config.bus.servers) {
    if (!isNatsServer(server)) r.problems.push(`NATS_URL: ${JSON.stringify(server)} is not a NATS server address (host:port, nats://host:port; a port up to 65535)`);
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return deepFreeze(config);
}

/** `CHORUS_NATS_CREDENTIALS`: a JSON file `{"<app>": {"user": "…", "pass": "…"}}` (infra/nats has a development one). */
function parseCredentials(r: EnvReader, root: string): Record<string, { user: string; pass: string }> | undefined {
  const file = r.optional('CHORUS_NATS_CREDENTIALS');
  if (!file) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(isAbsolute(file) ? file : resolve(root, file), 'utf8')) as Record<string, { user?: unknown; pass?: unknown }>;
    const out: Record<string, { user: string; pass: string }> = {};
    for (const [app, c] of Object.entries(parsed)) {
      if (typeof c?.user !== 'string' || typeof c?.pass !== 'string') r.problems.push(`CHORUS_NATS_CREDENTIALS: ${app} needs a string user and pass`);
      else out[app] = { user: c.user, pass: c.pass };
    }
    return out;
  } catch (e) {
    r.problems.push(`CHORUS_NATS_CREDENTIALS could not be read as JSON: ${(e as Error).message}`);
    return undefined;
  }
}

/** The bus options of one app: its own NATS user when credentials are configured. */
export function busOptionsFor(config: ChorusConfig, app: string): ChorusConfig['bus'] {
  const service = app === 'profiles' ? 'profile' : app;
  const own = config.credentials?.[service];
  if (config.credentials && !own) throw new ConfigError([`CHORUS_NATS_CREDENTIALS has no user for ${app}`]);
  return {
    ...config.bus,
    name: `chorus-${app}`,
    // Each service's user may subscribe only to its own inboxes (nats.permissions.ts).
    ...(own ? { user: own.user, pass: own.pass, inboxPrefix: serviceInboxPrefix(service as ServiceUser) } : {}),
    // With per-service users only the hub may administer streams; the others check they exist.
    manageTopology: !config.credentials || app === 'hub',
  };
}

/**
 * API keys from `CHORUS_API_KEYS` (`key:tenant,key:tenant`) and/or `CHORUS_API_KEYS_FILE` (a JSON
 * object `{"key": "tenant"}`), so keys can stay out of the environment.
 */
function parseApiKeys(r: EnvReader, root: string): Record<string, string> {
  const keys: Record<string, string> = {};
  const add = (key: string, tenant: string, where: string) => {
    if (key.length < 16) r.problems.push(`${where}: API keys must be at least 16 characters`);
    else if (!TENANT_ID_PATTERN.test(tenant)) r.problems.push(`${where}: ${JSON.stringify(tenant)} is not a valid tenant id`);
    // One key for two tenants is a typo that would hand one tenant's requests to the other.
    else if (Object.hasOwn(keys, key) && keys[key] !== tenant) r.problems.push(`${where}: one API key is given for two tenants, ${keys[key]} and ${tenant}`);
    else keys[key] = tenant;
  };
  for (const item of r.list('CHORUS_API_KEYS', [])) {
    const at = item.lastIndexOf(':');
    if (at <= 0) r.problems.push('CHORUS_API_KEYS must look like key:tenant,key:tenant');
    else add(item.slice(0, at), item.slice(at + 1), 'CHORUS_API_KEYS');
  }
  const file = r.optional('CHORUS_API_KEYS_FILE');
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(isAbsolute(file) ? file : resolve(root, file), 'utf8'));
    } catch (e) {
      r.problems.push(`CHORUS_API_KEYS_FILE could not be read as a JSON object of key → tenant: ${(e as Error).message}`);
    }
    if (parsed !== undefined && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))) {
      const kind = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`;
      r.problems.push(`CHORUS_API_KEYS_FILE must hold a JSON object of key → tenant ({"key": "tenant"}), not ${kind}`);
    } else if (parsed !== undefined) {
      // No key would mean no authentication at all: development mode, every tenant readable.
      if (Object.keys(parsed).length === 0) r.problems.push('CHORUS_API_KEYS_FILE holds no key: give at least one ({"key": "tenant"}), or unset it for development mode (no keys, every tenant readable)');
      for (const [key, tenant] of Object.entries(parsed)) {
        if (typeof tenant === 'string') add(key, tenant, 'CHORUS_API_KEYS_FILE');
        else r.problems.push(`CHORUS_API_KEYS_FILE: a key's tenant must be a string (a tenant id), not ${JSON.stringify(tenant)}`);
      }
    }
  }
  return keys;
}

/**
 * A server address nats.js can dial. It reads only host and port (it drops any `scheme://`: TLS is an
 * option, not a scheme), so that is what is checked: a host, and a port up to 65535. A typo (a port
 * past 65535, an empty entry of a list) is a bad setting to name at start-up, not an outage to retry.
 */
function isNatsServer(server: string): boolean {
  const hostPort = server.trim().replace(/^[^/]*:\/\//, '');
  try {
    return new URL(`nats://${hostPort}`).hostname !== '';
  } catch {
    // A bare IPv6 address (no brackets, so no port), which nats.js brackets itself.
    return /^[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*$/i.test(hostPort);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
