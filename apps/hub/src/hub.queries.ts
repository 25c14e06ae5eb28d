import { readWorkflowHistory, serveRequests, type Bus, type CountedEvents, type Responder } from '@chorus/bus';
import { toView } from '@chorus/correlation';
import {
  AGENT_NAME_PATTERN,
  BadRequestError,
  CORRELATION_ID_PATTERN,
  HubSubjects,
  TENANT_ID_PATTERN,
  TIME_FILTER_RULE,
  WORKFLOW_STATUSES,
  badField,
  isTimeFilter,
  type FieldError,
  type HistoryReply,
  type ListReply,
  type ListRequest,
  type WorkflowRequest,
  type WorkflowSummary,
  type WorkflowView,
} from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import type { AgentWindowStats } from './agent.stats';
import { HubBusyError, WorkflowNotFoundError } from './hub.errors';
import { LEDGER_EVENTS, type HubService } from './hub.service';
import type { LedgerStore } from './ledger.store';
import { ReadLimiter } from './read.limiter';

/**
 * How many times a history read that found fewer envelopes than the ledger's steps is read again
 * (0.1 s, doubling: 3 s in all), as long as half the deployment's request timeout allows.
 */
const HISTORY_REREADS = 5;
/** Re-reads are for a replica catching up after a failover, so only for workflows updated this recently. */
const HISTORY_REREAD_WITHIN_MS = 10 * 60_000;

const HUB_QUEUE = 'chorus-hub';
/** History reads one hub runs at once, and how many more may wait (see ReadLimiter). */
const HISTORY_READS_AT_ONCE = 8;
const HISTORY_READS_QUEUED = 64;
const MAX_PAGE = 500;

/** What `chorus.hub.stats` (and `GET /v1/stats`) answers. */
export interface HubStats {
  totals: {
    active: number;
    created: number;
    completed: number;
    failed: number;
    timed_out: number;
    cancelled: number;
    duplicates_dropped: number;
    late_envelopes: number;
    /** Workflows retried (each at most once: its retry is another workflow, counted as created). */
    retried: number;
    dead_letters: number;
  };
  /** Totals count events stored since then (the ledger-event stream's retention). */
  totals_since: string | null;
  /** Per-agent step statistics over the sliding window. */
  agents: AgentWindowStats[];
  window_ms: number;
}

/**
 * The hub's request/reply API. Reads of one workflow (status, history) are answered by every
 * replica; list and stats by the active hub, which holds the recent index and the agent windows.
 */
export class HubQueries {
  private readonly historyReads = new ReadLimiter(HISTORY_READS_AT_ONCE, HISTORY_READS_QUEUED, 'history reads');

  constructor(
    private readonly bus: Bus,
    private readonly hub: HubService,
    private readonly ledger: LedgerStore,
    private readonly events: CountedEvents,
    private readonly log: Logger,
    /** Finished workflows older than this have left the ledger; the recent index forgets them too. */
    private readonly retentionMs: number,
  ) {}

  serveReads(): Responder[] {
    return [
      serveRequests(this.bus, HubSubjects.Workflow, HUB_QUEUE, this.log, (r) => this.workflow(r)),
      serveRequests(this.bus, HubSubjects.History, HUB_QUEUE, this.log, (r) => this.history(r)),
    ];
  }

  serveActive(): Responder[] {
    return [
      serveRequests(this.bus, HubSubjects.List, HUB_QUEUE, this.log, (r) => this.list(r)),
      serveRequests(this.bus, HubSubjects.Stats, HUB_QUEUE, this.log, (r) => this.stats(r)),
    ];
  }

  async workflow(raw: unknown): Promise<WorkflowView> {
    return toView(await this.record(raw));
  }

  async history(raw: unknown): Promise<HistoryReply> {
    // Re-reads end in time for the answer to reach a caller that waits the deployment's request timeout.
    const rereadUntil = Date.now() + this.bus.options.requestTimeoutMs / 2;
    const record = await this.record(raw);
    // Start a minute before the workflow began, so clock skew between publishers loses nothing.
    const since = new Date(Date.parse(record.started_at) - 60_000);
    // Reads of one workflow's history at the same moment (a client's tries of one read, a page many
    // open at once) share one read of the stream, which takes one turn of the limit.
    const read = () =>
      this.bus.shared(`history\u0000${record.tenant_id}\u0000${record.correlation_id}`, () =>
        this.historyReads.run(() => readWorkflowHistory(this.bus, record.correlation_id, { tenantId: record.tenant_id, since }), this.bus.options.requestTimeoutMs),
      );
    let entries = await read();
    // The ledger saw at least one stored envelope per step. A read that finds fewer came from a
    // replica still catching up (after a cluster lost a node, the server hosting the read can lag
    // for a moment): read again rather than answer with a short audit trail.
    // Only for a workflow touched lately: an old one's envelopes may simply have left the stream.
    const recent = Date.now() - Date.parse(record.updated_at) < HISTORY_REREAD_WITHIN_MS;
    for (let attempt = 0; recent && entries.length < record.steps.length && attempt < HISTORY_REREADS; attempt++) {
      const wait = 100 * 2 ** attempt;
      if (Date.now() + wait > rereadUntil) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
      try {
        entries = await read();
      } catch (e) {
        // Busy now: answer with what the first read found rather than refuse it.
        if (e instanceof HubBusyError) break;
        throw e;
      }
    }
    if (recent && entries.length < record.steps.length) {
      this.log.warn({ correlation_id: record.correlation_id, read: entries.length, steps: record.steps.length }, 'history read back fewer envelopes than the ledger recorded');
    }
    return { correlation_id: record.correlation_id, envelopes: entries.map((e) => e.envelope) };
  }

  async list(raw: unknown): Promise<ListReply> {
    const request = parseListRequest(raw);
    const limit = request.limit ?? 50;
    const expiredBefore = Date.now() - this.retentionMs;
    const inRequest = matcher(request);
    const matches = (row: WorkflowSummary) => inRequest(row) && !(row.finished_at && Date.parse(row.finished_at) < expiredBefore);
    // Only the recent index is listed: reading the whole ledger for a page would cost a large one
    // seconds and hundreds of megabytes, a denial of service any client could ask for. Older
    // workflows are still found by id; `complete: false` says the list stopped short of them.
    const rows = [...this.hub.recent.values()].filter(matches).sort(newestFirst);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const more = rows.length > limit;
    return { workflows: page, next_cursor: more && last ? encodeCursor(last) : null, complete: more || this.hub.recent.complete };
  }

  /** Totals and per-agent statistics of one tenant (`{tenant_id}`: its workflows and its steps) or of all. */
  async stats(raw: unknown = {}): Promise<HubStats> {
    const problems: FieldError[] = [];
    const given = requestObject(raw, ['tenant_id'], problems).tenant_id;
    if (given !== undefined && (typeof given !== 'string' || !TENANT_ID_PATTERN.test(given))) problems.push(badField('tenant_id', 'tenant_id is not a valid tenant id'));
    if (problems.length > 0) throw new BadRequestError(problems);
    const tenant = given as string | undefined;
    const [{ counts, since }, deadLetters] = await Promise.all([this.events.counts(tenant), this.deadLetters(tenant)]);
    const n = (k: (typeof LEDGER_EVENTS)[number]) => counts[k] ?? 0;
    const finished = n('completed') + n('failed') + n('timed_out') + n('cancelled');
    return {
      totals: {
        active: Math.max(0, n('created') - finished),
        created: n('created'),
        completed: n('completed'),
        failed: n('failed'),
        timed_out: n('timed_out'),
        cancelled: n('cancelled'),
        duplicates_dropped: n('duplicate'),
        late_envelopes: n('late'),
        retried: n('retried'),
        dead_letters: deadLetters,
      },
      totals_since: since,
      // A tenant's view shows its own traffic through the agents; the operator's (no tenant), all of it.
      agents: tenant ? this.hub.tenantAgentStats.snapshot(tenant) : this.hub.agentStats.snapshot(),
      window_ms: this.hub.agentStats.windowMs,
    };
  }

  private async deadLetters(tenant?: string): Promise<number> {
    const info = await this.bus.jsm.streams.info(this.bus.options.deadLetterStream, tenant ? { subjects_filter: `chorus.dlq.${tenant}.*` } : undefined);
    if (!tenant) return info.state.messages;
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  }

  private async record(raw: unknown) {
    const { correlation_id, tenant_id } = parseWorkflowRequest(raw);
    // Without a tenant: the active hub's recent index knows recent workflows, and its updates in
    // progress the ones whose first write is not done yet (waited for, as with a tenant); the ledger is searched
    // by a pattern only for others, which costs in proportion to its size on nats-server 2.9 (about
    // 0.5 s for an unknown id among 300k records, 0.03 s among 10k).
    const recent = tenant_id === undefined ? (this.hub.recent.tenantOf(correlation_id) ?? this.hub.updatingTenantOf(correlation_id)) : undefined;
    let record = recent ? await this.hub.find(recent, correlation_id) : null;
    // (A recent tenant whose record has gone, or none: the ledger says whose it is.)
    if (!record) {
      const tenant = tenant_id ?? (await this.ledger.findTenant(correlation_id));
      record = tenant ? await this.hub.find(tenant, correlation_id) : null;
    }
    if (!record) throw new WorkflowNotFoundError(correlation_id);
    return record;
  }
}

function matcher(r: ListRequest): (row: WorkflowSummary) => boolean {
  const since = r.since ? Date.parse(r.since) : -Infinity;
  const until = r.until ? Date.parse(r.until) : Infinity;
  const cursor = r.cursor ? decodeCursor(r.cursor) : null;
  return (row) => {
    const started = Date.parse(row.started_at);
    return (
      (!r.tenant_id || row.tenant_id === r.tenant_id) &&
      (!r.status || row.status === r.status) &&
      (!r.agent || row.agents_involved.includes(r.agent)) &&
      started >= since &&
      started <= until &&
      (!cursor || newestFirst(row, cursor) > 0)
    );
  };
}

const WORKFLOW_FIELDS = ['correlation_id', 'tenant_id'] as const;

/**
 * A read of one workflow (status, history): every invalid field named at once, and an unknown one
 * refused as in a list: `{"tennant_id": …}` read the workflow in whichever tenant holds it.
 */
function parseWorkflowRequest(raw: unknown): WorkflowRequest {
  const problems: FieldError[] = [];
  const r = requestObject(raw ?? {}, WORKFLOW_FIELDS, problems) as Partial<WorkflowRequest>;
  if (typeof r.correlation_id !== 'string' || !CORRELATION_ID_PATTERN.test(r.correlation_id)) {
    problems.push(badField('correlation_id', 'correlation_id must match [A-Za-z0-9_-]{1,128}'));
  }
  if (r.tenant_id !== undefined && r.tenant_id !== null && (typeof r.tenant_id !== 'string' || !TENANT_ID_PATTERN.test(r.tenant_id))) {
    problems.push(badField('tenant_id', 'tenant_id must match [a-z0-9][a-z0-9_-]{0,62}'));
  }
  if (problems.length > 0) throw new BadRequestError(problems);
  return { correlation_id: r.correlation_id as string, tenant_id: r.tenant_id ?? undefined };
}

/**
 * The request as an object of `fields` only: anything else is a mistake that would widen the answer
 * (`{"tennant_id": …}` listed every tenant), so each unknown field is named, with the ones there are.
 */
function requestObject(raw: unknown, fields: readonly string[], problems: FieldError[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(badField('$', `the request must be a JSON object (fields: ${fields.join(', ')})`));
    return {};
  }
  for (const key of Object.keys(raw)) {
    if (!fields.includes(key)) problems.push(badField(key, `${key} is not a field of this request (fields: ${fields.join(', ')})`));
  }
  return raw as Record<string, unknown>;
}

const LIST_FIELDS = ['tenant_id', 'status', 'agent', 'since', 'until', 'limit', 'cursor'] as const;

function parseListRequest(raw: unknown): ListRequest {
  const problems: FieldError[] = [];
  const r = requestObject(raw, LIST_FIELDS, problems) as ListRequest;
  if (r.tenant_id !== undefined && !TENANT_ID_PATTERN.test(String(r.tenant_id))) problems.push(badField('tenant_id', 'tenant_id is not a valid tenant id'));
  if (r.status !== undefined && !WORKFLOW_STATUSES.includes(r.status)) problems.push(badField('status', `status must be one of ${WORKFLOW_STATUSES.join(', ')}`));
  // As over HTTP: an empty agent filtered nothing (every workflow listed) and `Intent` matched none, silently.
  if (r.agent !== undefined && (typeof r.agent !== 'string' || !AGENT_NAME_PATTERN.test(r.agent))) problems.push(badField('agent', 'agent must be an agent name ([a-z][a-z0-9_-]{0,62})'));
  // The same rule as over HTTP and in the CLI: Date.parse alone reads `2026-12-01 15:00` as local time.
  if (r.since !== undefined && !isTimeFilter(r.since)) problems.push(badField('since', `since must be ${TIME_FILTER_RULE}`));
  if (r.until !== undefined && !isTimeFilter(r.until)) problems.push(badField('until', `until must be ${TIME_FILTER_RULE}`));
  // A page above the largest is refused, not silently cut: a caller asking for 1,000 would take 500 for all there is.
  if (r.limit !== undefined && (!Number.isInteger(r.limit) || r.limit < 1 || r.limit > MAX_PAGE)) problems.push(badField('limit', `limit must be an integer from 1 to ${MAX_PAGE}`));
  if (r.cursor !== undefined && decodeCursor(r.cursor) === null) problems.push(badField('cursor', 'cursor is not valid'));
  if (problems.length > 0) throw new BadRequestError(problems);
  return r;
}

interface Cursor {
  started_at: string;
  correlation_id: string;
}

function newestFirst(a: Cursor, b: Cursor): number {
  return b.started_at.localeCompare(a.started_at) || b.correlation_id.localeCompare(a.correlation_id);
}

function encodeCursor(row: Cursor): string {
  return Buffer.from(JSON.stringify({ started_at: row.started_at, correlation_id: row.correlation_id })).toString('base64url');
}

function decodeCursor(cursor: string): Cursor | null {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    return typeof c.started_at === 'string' && typeof c.correlation_id === 'string' ? c : null;
  } catch {
    return null;
  }
}
