import { readWorkflowHistory, serveRequests, type Bus, type Responder } from '@chorus/bus';
import { toSummary, toView } from '@chorus/correlation';
import {
  CORRELATION_ID_PATTERN,
  HubSubjects,
  TENANT_ID_PATTERN,
  WORKFLOW_STATUSES,
  type HistoryReply,
  type ListReply,
  type ListRequest,
  type WorkflowRequest,
  type WorkflowView,
} from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { BadHubRequestError, WorkflowNotFoundError } from './hub.errors';
import type { HubService } from './hub.service';
import type { LedgerStore } from './ledger.store';

const HUB_QUEUE = 'chorus-hub';
const MAX_PAGE = 500;

/** The hub's request/reply API (status, history, list, stats), shared by its replicas. */
export class HubQueries {
  constructor(
    private readonly bus: Bus,
    private readonly hub: HubService,
    private readonly ledger: LedgerStore,
    private readonly log: Logger,
  ) {}

  serve(): Responder[] {
    return [
      serveRequests(this.bus, HubSubjects.Workflow, HUB_QUEUE, this.log, (r) => this.workflow(r)),
      serveRequests(this.bus, HubSubjects.History, HUB_QUEUE, this.log, (r) => this.history(r)),
      serveRequests(this.bus, HubSubjects.List, HUB_QUEUE, this.log, (r) => this.list(r)),
      serveRequests(this.bus, HubSubjects.Stats, HUB_QUEUE, this.log, async () => this.stats()),
    ];
  }

  async workflow(raw: unknown): Promise<WorkflowView> {
    const { correlation_id, tenant_id } = parseWorkflowRequest(raw);
    const tenant = tenant_id ?? (await this.ledger.findTenant(correlation_id));
    const record = tenant ? await this.hub.find(tenant, correlation_id) : null;
    if (!record) throw new WorkflowNotFoundError(correlation_id);
    return toView(record);
  }

  async history(raw: unknown): Promise<HistoryReply> {
    const { correlation_id, tenant_id } = parseWorkflowRequest(raw);
    const tenant = tenant_id ?? (await this.ledger.findTenant(correlation_id));
    const record = tenant ? await this.hub.find(tenant, correlation_id) : null;
    if (!record) throw new WorkflowNotFoundError(correlation_id);
    // Start a little before the workflow began, so a clock skew between publishers loses nothing.
    const since = new Date(Date.parse(record.started_at) - 60_000);
    const entries = await readWorkflowHistory(this.bus, correlation_id, { tenantId: record.tenant_id, since });
    return { correlation_id, envelopes: entries.map((e) => e.envelope) };
  }

  async list(raw: unknown): Promise<ListReply> {
    const request = parseListRequest(raw);
    const limit = Math.min(request.limit ?? 50, MAX_PAGE);
    const since = request.since ? Date.parse(request.since) : -Infinity;
    const until = request.until ? Date.parse(request.until) : Infinity;
    const cursor = request.cursor ? decodeCursor(request.cursor) : null;
    const rows: WorkflowView[] = [];
    for await (const { value } of this.ledgerEntries(request.tenant_id)) {
      const started = Date.parse(value.started_at);
      if (request.status && value.status !== request.status) continue;
      if (request.agent && !value.agents_involved.includes(request.agent)) continue;
      if (started < since || started > until) continue;
      if (cursor && !isAfter(value, cursor)) continue;
      rows.push(toView(value));
    }
    rows.sort(newestFirst);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      workflows: page.map(toSummary),
      next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }

  stats() {
    const c = this.hub.counters;
    return {
      envelopes: c.envelopes,
      duplicates_dropped: c.duplicatesDropped,
      late_envelopes: c.lateEnvelopes,
      redeliveries: c.redeliveries,
      finished: c.finished,
      active_deadlines: this.hub.activeDeadlines,
    };
  }

  private ledgerEntries(tenantId?: string) {
    return tenantId ? this.ledgerEntriesFor(tenantId) : this.ledger.entries();
  }

  private async *ledgerEntriesFor(tenantId: string) {
    for await (const e of this.ledger.entries()) if (e.value.tenant_id === tenantId) yield e;
  }
}

function parseWorkflowRequest(raw: unknown): WorkflowRequest {
  const r = (raw ?? {}) as Partial<WorkflowRequest>;
  if (typeof r.correlation_id !== 'string' || !CORRELATION_ID_PATTERN.test(r.correlation_id)) {
    throw new BadHubRequestError('correlation_id must match [A-Za-z0-9_-]{1,128}');
  }
  if (r.tenant_id !== undefined && r.tenant_id !== null && (typeof r.tenant_id !== 'string' || !TENANT_ID_PATTERN.test(r.tenant_id))) {
    throw new BadHubRequestError('tenant_id must match [a-z0-9][a-z0-9_-]{0,62}');
  }
  return { correlation_id: r.correlation_id, tenant_id: r.tenant_id ?? undefined };
}

function parseListRequest(raw: unknown): ListRequest {
  const r = (raw ?? {}) as ListRequest;
  const problems: string[] = [];
  if (r.tenant_id !== undefined && !TENANT_ID_PATTERN.test(String(r.tenant_id))) problems.push('tenant_id is not a valid tenant id');
  if (r.status !== undefined && !WORKFLOW_STATUSES.includes(r.status)) problems.push(`status must be one of ${WORKFLOW_STATUSES.join(', ')}`);
  if (r.since !== undefined && Number.isNaN(Date.parse(r.since))) problems.push('since must be an ISO 8601 date-time');
  if (r.until !== undefined && Number.isNaN(Date.parse(r.until))) problems.push('until must be an ISO 8601 date-time');
  if (r.limit !== undefined && (!Number.isInteger(r.limit) || r.limit < 1)) problems.push('limit must be a positive integer');
  if (r.cursor !== undefined && decodeCursor(r.cursor) === null) problems.push('cursor is not valid');
  if (problems.length > 0) throw new BadHubRequestError(problems.join('; '));
  return r;
}

interface Cursor {
  started_at: string;
  correlation_id: string;
}

function newestFirst(a: WorkflowView, b: WorkflowView): number {
  return b.started_at.localeCompare(a.started_at) || b.correlation_id.localeCompare(a.correlation_id);
}

function isAfter(row: WorkflowView, cursor: Cursor): boolean {
  return newestFirst(row, { started_at: cursor.started_at, correlation_id: cursor.correlation_id } as WorkflowView) > 0;
}

function encodeCursor(row: WorkflowView): string {
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
