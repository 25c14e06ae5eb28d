import { Controller, Get, Inject, NotFoundException, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorBodySchema } from './openapi.schemas';
import type { Request, Response } from 'express';
import { Bus, ChorusClient, readWorkflowHistory, watchWorkflow } from '@chorus/bus';
import { startsRecord } from '@chorus/correlation';
import { isTerminalStatus, parseEnvelope, parseWorkflowSubject, type Envelope } from '@chorus/envelope';
import { checkIds, errorBody } from './http.errors';
import { ApiCommonResponses, ApiTenantResponses } from './openapi';
import { QueryParams } from './query-params.guard';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import { endsWithRequest, SSE_SHUTDOWN_COMMENT } from './http.shutdown';
import { Tenant, lookupTenant, scopedTenant, type TenantScope } from './tenant.guard';

const HEARTBEAT_MS = 15_000;
/** The reconnection delay an `unconfirmed` stream asks an EventSource for. */
const UNCONFIRMED_RETRY_MS = 30_000;

/** Whether the hub records a workflow it does not know on this stored envelope (a valid one that starts a record). */
function isRecordable(envelope: unknown, subject: string): boolean {
  const parsed = parseEnvelope(envelope, { subject });
  return parsed.ok && startsRecord(parsed.value.message_type);
}

/** One step of a workflow as the event stream shows it (the full envelope is in the history). */
export function toStepEvent(e: Envelope) {
  return {
    message_id: e.message_id,
    causation_id: e.causation_id,
    message_type: e.message_type,
    agent: e.agent,
    status: e.status,
    timestamp: e.timestamp,
    attempt: e.attempt,
    next_steps: e.next_steps,
    error_details: e.error_details,
    ...(e.message_type === 'status_update' ? { workflow_status: (e.payload as { workflow_status?: string }).workflow_status } : {}),
  };
}

/** Envelopes that are an agent's work on a workflow: the first of them makes it running. */
const AGENT_WORK: ReadonlySet<string> = new Set(['classification_result', 'execution_plan', 'tool_results', 'response', 'status_update']);

@ApiTags('workflows')
@ApiCommonResponses()
@ApiTenantResponses()
@Controller('v1/workflows')
export class EventsController {
  constructor(
    private readonly bus: Bus,
    private readonly client: ChorusClient,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
  ) {}

  /**
   * Server-sent events: `step` for every envelope of the workflow as it happens (the ones already
   * stored first), `status` when the status changes, then exactly one `terminal` event carrying the
   * finished workflow, and the stream ends. If the hub (down, or cut off from the ingress) has not
   * confirmed an end CHORUS_WATCH_GRACE_MS after the workflow's deadline (a minute by default), the
   * stream ends instead with one `unconfirmed` event giving the reason; a client may reconnect
   * later, or read the workflow. A reconnection with `Last-Event-ID` resumes after that step, and
   * one after the terminal event gets 204 (an EventSource then stops reconnecting).
   */
  @Get(':id/events')
  @QueryParams('tenant_id')
  @ApiOperation({
    summary: 'Server-sent events: `step`s and `status` changes as they happen, then one `terminal` event (or, if the hub never confirms the end, one `unconfirmed` event)',
  })
  @ApiResponse({
    status: 200,
    description: 'An event stream: `status`, `step`s, then one `terminal` (or `unconfirmed`) event',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 204, description: 'Last-Event-ID names the terminal event: nothing more to send' })
  @ApiResponse({ status: 404, type: ErrorBodySchema, description: "Unknown, expired, or another tenant's" })
  async events(
    @Param('id') id: string,
    @Query('tenant_id') requested: string | undefined,
    @Tenant() scope: TenantScope,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    checkIds(id, requested);
    res.locals.correlation_id = id;
    // Listened for from the start: a client that leaves while the workflow is looked up would
    // otherwise keep a watch (its subscription and timers) until the workflow's end or deadline.
    // The ingress shutting down ends the stream too (http.shutdown.ts).
    const stop = endsWithRequest(req, this.options.closing);
    const view = await this.client.workflow(id, lookupTenant(scope, requested));
    let tenant = view?.tenant_id ?? lookupTenant(scope, requested);
    const since = new Date((view ? Date.parse(view.started_at) : Date.now() - this.options.maxDeadlineMs) - 60_000);
    if (!view) {
      // Not recorded: a stream only if the stream holds what the hub will record, a valid query or
      // agent's step. A query it dead-lettered, or status updates and commands alone (docs/hub.md,
      // strays), are never recorded: the stream would have sent heartbeats for ever. Asked without a
      // tenant in development mode, the stream says whose it is (this looked in `default` only, and
      // another tenant's workflow read right after its 202 was a 404).
      const recordable = (await readWorkflowHistory(this.bus, id, { tenantId: tenant, since })).find((e) => isRecordable(e.envelope, e.subject));
      if (!recordable) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
      tenant ??= parseWorkflowSubject(recordable.subject)?.tenantId;
    }
    const watched = tenant ?? scopedTenant(scope, requested);
    // An EventSource reconnecting says what it last received (Last-Event-ID). After the terminal
    // event there is nothing more: 204 tells it to stop reconnecting. After a step, the stream
    // resumes past that step (if it is one of the workflow's; otherwise it starts over).
    const lastEventId = req.header('last-event-id');
    if (lastEventId === `terminal-${id}`) {
      res.status(204).end();
      return;
    }
    let resumeAfter =
      lastEventId && (await readWorkflowHistory(this.bus, id, { tenantId: watched, since })).some((e) => (e.envelope as { message_id?: unknown } | null)?.message_id === lastEventId) ? lastEventId : undefined;

    if (stop.aborted && !this.options.closing.aborted) return;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    const send = (event: string, data: unknown, eventId?: string, retryMs?: number) =>
      res.write(`${retryMs ? `retry: ${retryMs}\n` : ''}event: ${event}\n${eventId ? `id: ${eventId}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    try {
      // `status` events tell pending from running; the end is the `terminal` event alone. A finished
      // workflow's stream replays its steps from the start: its first `status` comes with them, not
      // before them as its final status (a client that stopped on it missed every step).
      const ended = view !== null && isTerminalStatus(view.status);
      let status: string = view && !ended ? view.status : 'pending';
      // Not recorded yet (just accepted): pending, as the hub will record it.
      let sent: string | undefined;
      if (!ended) send('status', { correlation_id: id, workflow_status: (sent = status) });
      let over = false;
      for await (const event of watchWorkflow(this.bus, watched, id, { since, signal: stop, giveUpAfterDeadlineMs: this.options.watchGraceMs, deadline: view?.deadline })) {
        if (event.kind === 'terminal') {
          // The watch ends on the ledger's view of the finished workflow, not on an announcement.
          send('terminal', event.view, `terminal-${id}`);
          over = true;
          break;
        }
        if (event.kind === 'unconfirmed') {
          // An EventSource reconnects when the stream ends: not at once (it would replay every step).
          send('unconfirmed', { correlation_id: id, deadline: event.deadline, reason: event.reason, status_url: `/v1/workflows/${id}` }, undefined, UNCONFIRMED_RETRY_MS);
          over = true;
          break;
        }
        // Shutting down: the steps already stored (a watch replays them whatever its signal) are not sent from here.
        if (stop.aborted) break;
        const e = event.envelope;
        // Running once an agent has done work for it, as the hub counts it (a cancel or a retry command is no work).
        const starts = status === 'pending' && e.agent !== 'hub' && AGENT_WORK.has(e.message_type);
        if (starts) status = 'running';
        if (resumeAfter) {
          // A resumed stream skips what its client has: the steps, and the status they brought
          // (unless this stream told it another since: then it is told again past them).
          if (e.message_id === resumeAfter) {
            resumeAfter = undefined;
            if (sent !== undefined && sent !== status) send('status', { correlation_id: id, workflow_status: (sent = status) });
          }
          continue;
        }
        send('step', toStepEvent(e), e.message_id);
        if (starts) send('status', { correlation_id: id, workflow_status: (sent = status) });
      }
      if (!over && this.options.closing.aborted) res.write(SSE_SHUTDOWN_COMMENT);
    } finally {
      clearInterval(heartbeat);
      res.end();
    }
  }
}
