import { Body, ConflictException, Controller, Get, HttpCode, NotFoundException, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ChorusClient } from '@chorus/bus';
import { isTerminalStatus, type HistoryReply, type ListReply, type WorkflowView } from '@chorus/envelope';
import { CancelWorkflowDto, ListWorkflowsDto } from './list-workflows.dto';
import { Tenant, lookupTenant, scopedTenant, type TenantScope } from './tenant.guard';
import { checkIds, errorBody } from './http.errors';

@ApiTags('workflows')
@Controller('v1/workflows')
export class WorkflowsController {
  constructor(private readonly client: ChorusClient) {}

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
  async workflow(
    @Param('id') id: string,
    @Query('tenant_id') tenant: string | undefined,
    @Tenant() scope: TenantScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WorkflowView> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    const workflow = await this.client.workflow(id, lookupTenant(scope, tenant));
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
    const workflow = await this.client.workflow(id, lookupTenant(scope, tenant));
    if (!workflow) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    if (isTerminalStatus(workflow.status)) {
      throw new ConflictException({ ...errorBody(409, `workflow ${id} already finished: ${workflow.status}`), status: workflow.status });
    }
    await this.client.cancel(workflow, body?.reason || 'cancelled through the HTTP API');
    return { correlation_id: id, status: 'cancelling' };
  }
}
