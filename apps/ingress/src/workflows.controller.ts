import { Body, ConflictException, Controller, Get, HttpCode, Inject, NotFoundException, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ChorusClient, RetryRefusedError, type RetryStarted } from '@chorus/bus';
import { isTerminalStatus, type HistoryReply, type ListReply, type WorkflowView } from '@chorus/envelope';
import { CancelWorkflowDto, ListWorkflowsDto, RetryWorkflowDto } from './list-workflows.dto';
import { Tenant, lookupTenant, scopedTenant, type TenantScope } from './tenant.guard';
import { checkIds, errorBody, type ConflictBody } from './http.errors';
import { QueryParams } from './query-params.guard';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import type { Cancelling } from './http.bodies';
import { ApiBodyErrors, ApiCommonResponses, ApiTenantResponses } from './openapi';
import { CancellingSchema, ConflictBodySchema, ErrorBodySchema, HistoryReplySchema, ListReplySchema, RetryStartedSchema, WorkflowViewSchema } from './openapi.schemas';

@ApiTags('workflows')
@ApiCommonResponses()
@ApiTenantResponses()
@Controller('v1/workflows')
export class WorkflowsController {
  constructor(
    private readonly client: ChorusClient,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
  ) {}

  /**
   * The workflow, also right after its 202 (the hub records it a moment later): 503 if the hub has
   * not within a couple of seconds, 404 only for an id nobody submitted or one that left the ledger.
   */
  private find(id: string, tenant: string | undefined): Promise<WorkflowView | null> {
    // A minute of margin for the publishers' clocks, as the hub allows.
    return this.client.find(id, tenant, { acceptedWithinMs: this.options.maxDeadlineMs + 60_000 });
  }

  /** The workflow a route names (its id and `tenant_id` checked: 400), or a 404; logged under its id. */
  private async existing(id: string, tenant: string | undefined, scope: TenantScope, res: Response): Promise<WorkflowView> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    const workflow = await this.find(id, lookupTenant(scope, tenant));
    if (!workflow) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    return workflow;
  }

  /** Workflows, newest first, filtered and paginated. */
  @Get()
  @ApiOperation({
    summary: 'Workflows, newest first, filtered and paginated',
    description:
      'Listed from the hub\'s index of its most recent workflows (CHORUS_HUB_RECENT). `complete: false` means the list ended there while older workflows exist; each is still found by id.',
  })
  @ApiResponse({ status: 200, type: ListReplySchema, description: 'A page of workflows, newest first' })
  list(@Query() query: ListWorkflowsDto, @Tenant() scope: TenantScope): Promise<ListReply> {
    // Development mode lists every tenant unless one is asked for; with keys, only the key's.
    const tenant = scope.authenticated ? scopedTenant(scope, query.tenant_id) : query.tenant_id;
    return this.client.list({ ...query, tenant_id: tenant });
  }

  @Get(':id')
  @QueryParams('tenant_id')
  @ApiOperation({ summary: 'A workflow: status, steps, agents, errors, duplicates dropped, result' })
  @ApiResponse({ status: 200, type: WorkflowViewSchema, description: 'The workflow as the hub records it (docs/hub.md: the workflow record)' })
  @ApiResponse({ status: 400, type: ErrorBodySchema, description: 'An invalid id or tenant_id, or an unknown query parameter; `errors` names each' })
  @ApiResponse({ status: 404, type: ErrorBodySchema, description: "Unknown, expired, or another tenant's" })
  @ApiResponse({ status: 503, type: ErrorBodySchema, description: 'Accepted, but the hub has not recorded it yet (or is not answering): retry' })
  async workflow(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WorkflowView> {
    return this.existing(id, tenant, scope, res);
  }

  @Get(':id/history')
  @QueryParams('tenant_id')
  @ApiOperation({ summary: "The workflow's envelopes in stream order (its audit trail)" })
  @ApiResponse({ status: 200, type: HistoryReplySchema, description: '`{correlation_id, envelopes}`, each envelope as published' })
  @ApiResponse({ status: 404, type: ErrorBodySchema, description: "Unknown, expired, or another tenant's" })
  @ApiResponse({
    status: 503,
    type: ErrorBodySchema,
    description: 'Accepted, but the hub has not recorded it yet (or is not answering), or it runs as many history reads as it takes (`Retry-After`): retry',
  })
  async history(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<HistoryReply> {
    // Recorded first (see `find`), so a history read right after the submission is not a 404.
    await this.existing(id, tenant, scope, res);
    const history = await this.client.history(id, lookupTenant(scope, tenant));
    if (!history) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    return history;
  }

  /** Cancels a workflow that has not finished: 202, then the hub records it as cancelled, unless it ended first. */
  @Post(':id/cancel')
  @QueryParams('tenant_id')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel a workflow that has not finished' })
  @ApiResponse({ status: 202, type: CancellingSchema, description: '`{correlation_id, status: "cancelling"}`: the cancel is published; the hub records the workflow as cancelled unless an end it reached meanwhile (its response, a failure, its deadline) comes first. Read the workflow for how it ended' })
  @ApiResponse({ status: 404, type: ErrorBodySchema, description: "Unknown, expired, or another tenant's" })
  @ApiResponse({ status: 409, type: ConflictBodySchema, description: 'Already finished' })
  @ApiBodyErrors()
  @ApiBody({ type: CancelWorkflowDto, required: false })
  async cancel(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Body() body: CancelWorkflowDto,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Cancelling> {
    const workflow = await this.existing(id, tenant, scope, res);
    if (isTerminalStatus(workflow.status)) {
      throw new ConflictException({ ...errorBody(409, `workflow ${id} already finished: ${workflow.status}`), status: workflow.status } satisfies ConflictBody);
    }
    await this.client.cancel(workflow, body.reason || 'cancelled through the HTTP API');
    return { correlation_id: id, status: 'cancelling' };
  }

  /**
   * Retries a workflow that ended without a complete answer (failed, timed out, cancelled, or
   * completed degraded): 202 with the new workflow that runs its request again, or 200 with the
   * retry it already has. The retried workflow keeps its status; the two name each other.
   */
  @Post(':id/retry')
  @QueryParams('tenant_id')
  @HttpCode(202)
  @ApiOperation({ summary: 'Retry a workflow that failed, timed out, was cancelled or completed degraded' })
  @ApiResponse({ status: 202, type: RetryStartedSchema, description: '`{correlation_id, tenant_id, retry_of, deadline, status_url}` of the new workflow, once the hub has recorded it' })
  @ApiResponse({ status: 200, type: RetryStartedSchema, description: 'Retried before: the same, for that retry' })
  @ApiResponse({ status: 404, type: ErrorBodySchema, description: "Unknown, expired, or another tenant's" })
  @ApiResponse({ status: 409, type: ConflictBodySchema, description: '`error_type` NOT_RETRYABLE (not ended, completed with every lens, or its retry has left the ledger) or RETRY_IMPOSSIBLE (its query is no longer in the stream, or could not be published again)' })
  @ApiResponse({ status: 503, type: ErrorBodySchema, description: 'The hub has not applied the request within 5 s: ask again (for the same retry)' })
  @ApiBodyErrors()
  @ApiBody({ type: RetryWorkflowDto, required: false })
  async retry(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Body() body: RetryWorkflowDto,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Omit<RetryStarted, 'duplicate'> & { status_url: string }> {
    const workflow = await this.existing(id, tenant, scope, res);
    try {
      const { duplicate, ...started } = await this.client.retry(workflow, body.reason || 'retried through the HTTP API');
      const statusUrl = `/v1/workflows/${started.correlation_id}`;
      res.setHeader('Location', statusUrl);
      if (duplicate) res.status(200);
      return { ...started, status_url: statusUrl };
    } catch (e) {
      if (e instanceof RetryRefusedError) throw new ConflictException({ ...errorBody(409, e.message), status: workflow.status, error_type: e.code } satisfies ConflictBody);
      throw e;
    }
  }
}
