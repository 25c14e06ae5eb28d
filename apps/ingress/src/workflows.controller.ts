import { Body, ConflictException, Controller, Get, HttpCode, Inject, NotFoundException, Param, Post, Query, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Bus, ChorusClient, readWorkflowHistory, terminalStatusOf } from '@chorus/bus';
import { isTerminalStatus, parseEnvelope, type HistoryReply, type ListReply, type WorkflowView } from '@chorus/envelope';
import { CancelWorkflowDto, ListWorkflowsDto } from './list-workflows.dto';
import { Tenant, lookupTenant, scopedTenant, type TenantScope } from './tenant.guard';
import { checkIds, errorBody } from './http.errors';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';

/** How long a read of a workflow the stream has but the hub has not recorded yet waits for the hub. */
const RECORD_WAIT_MS = 2000;
/** The same, for a workflow whose end the hub has already announced. */
const ANNOUNCED_END_WAIT_MS = 300;

@ApiTags('workflows')
@Controller('v1/workflows')
export class WorkflowsController {
  constructor(
    private readonly client: ChorusClient,
    private readonly bus: Bus,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
  ) {}

  /**
   * The hub's view of a workflow. The hub records a workflow a moment after its query is accepted
   * (202), so a read right after the submission can come first: if the hub does not know the id but
   * the workflow stream holds its query, recent enough to be running, the hub is asked again for up
   * to RECORD_WAIT_MS, then the answer is 503 (retry), not 404. If the stream also holds the end the
   * hub announced, it is asked for a moment only: a finished workflow that left the ledger keeps its
   * trail in the stream, and that one is gone (404).
   */
  private async find(id: string, tenant: string | undefined): Promise<WorkflowView | null> {
    const view = await this.client.workflow(id, tenant);
    if (view) return view;
    // A minute of margin for the publishers' clocks, as the hub allows.
    const since = new Date(Date.now() - this.options.maxDeadlineMs - 60_000);
    const envelopes = (await readWorkflowHistory(this.bus, id, { tenantId: tenant, since })).flatMap((entry) => {
      const parsed = parseEnvelope(entry.envelope, { subject: entry.subject });
      return parsed.ok ? [parsed.value] : [];
    });
    if (!envelopes.some((e) => e.message_type === 'query' && Date.parse(e.timestamp) >= since.getTime())) return null;
    // An end the hub announced is saved within milliseconds: if it is still unknown after that, the
    // workflow finished and has since left the ledger.
    const ended = envelopes.some((e) => terminalStatusOf(e) !== null);
    const until = Date.now() + (ended ? ANNOUNCED_END_WAIT_MS : RECORD_WAIT_MS);
    for (let wait = 10; Date.now() < until; wait = Math.min(wait * 2, 200)) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      const recorded = await this.client.workflow(id, tenant);
      if (recorded) return recorded;
    }
    if (ended) return null;
    throw new ServiceUnavailableException(errorBody(503, `workflow ${id} was accepted, but the hub has not recorded it yet; try again shortly`));
  }

  /** Workflows, newest first, filtered and paginated. */
  @Get()
  @ApiOperation({
    summary: 'Workflows, newest first, filtered and paginated',
    description:
      'Listed from the hub\'s index of its most recent workflows (CHORUS_HUB_RECENT). `complete: false` means the list ended there while older workflows exist; each is still found by id.',
  })
  list(@Query() query: ListWorkflowsDto, @Tenant() scope: TenantScope): Promise<ListReply> {
    // Development mode lists every tenant unless one is asked for; with keys, only the key's.
    const tenant = scope.authenticated ? scopedTenant(scope, query.tenant_id) : query.tenant_id;
    return this.client.list({ ...query, tenant_id: tenant });
  }

  @Get(':id')
  @ApiOperation({ summary: 'A workflow: status, steps, agents, errors, duplicates dropped, result' })
  @ApiResponse({ status: 404, description: "Unknown, expired, or another tenant's" })
  @ApiResponse({ status: 503, description: 'Accepted, but the hub has not recorded it yet (or is not answering): retry' })
  async workflow(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WorkflowView> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    const workflow = await this.find(id, lookupTenant(scope, tenant));
    if (!workflow) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    return workflow;
  }

  @Get(':id/history')
  @ApiOperation({ summary: "The workflow's envelopes in stream order (its audit trail)" })
  async history(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<HistoryReply> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    // Recorded first (see `find`), so a history read right after the submission is not a 404.
    if (!(await this.find(id, lookupTenant(scope, tenant)))) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    const history = await this.client.history(id, lookupTenant(scope, tenant));
    if (!history) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    return history;
  }

  /** Cancels a workflow that has not finished: 202, then the hub records it as cancelled. */
  @Post(':id/cancel')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel a workflow that has not finished' })
  @ApiResponse({ status: 409, description: 'Already finished' })
  async cancel(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Body() body: CancelWorkflowDto | undefined,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ correlation_id: string; status: 'cancelling' }> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    const workflow = await this.find(id, lookupTenant(scope, tenant));
    if (!workflow) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    if (isTerminalStatus(workflow.status)) {
      throw new ConflictException({ ...errorBody(409, `workflow ${id} already finished: ${workflow.status}`), status: workflow.status });
    }
    await this.client.cancel(workflow, body?.reason || 'cancelled through the HTTP API');
    return { correlation_id: id, status: 'cancelling' };
  }
}
