import { Controller, Get, NotFoundException, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ChorusClient } from '@chorus/bus';
import { CORRELATION_ID_PATTERN, TENANT_ID_PATTERN, type HistoryReply, type WorkflowView } from '@chorus/envelope';
import { errorBody, InvalidRequestException } from './http.errors';

@Controller('v1/workflows')
export class WorkflowsController {
  constructor(private readonly client: ChorusClient) {}

  @Get(':id')
  async workflow(@Param('id') id: string, @Query('tenant_id') tenant: string | undefined, @Res({ passthrough: true }) res: Response): Promise<WorkflowView> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    const workflow = await this.client.workflow(id, tenant);
    if (!workflow) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    return workflow;
  }

  @Get(':id/history')
  async history(@Param('id') id: string, @Query('tenant_id') tenant: string | undefined, @Res({ passthrough: true }) res: Response): Promise<HistoryReply> {
    checkIds(id, tenant);
    res.locals.correlation_id = id;
    const history = await this.client.history(id, tenant);
    if (!history) throw new NotFoundException(errorBody(404, `no workflow ${id}`));
    return history;
  }
}

function checkIds(id: string, tenant: string | undefined): void {
  const errors = [];
  if (!CORRELATION_ID_PATTERN.test(id)) errors.push({ field: 'id', messages: ['id must match [A-Za-z0-9_-]{1,128}'] });
  if (tenant !== undefined && !TENANT_ID_PATTERN.test(tenant)) errors.push({ field: 'tenant_id', messages: ['tenant_id must match [a-z0-9][a-z0-9_-]{0,62}'] });
  if (errors.length > 0) throw new InvalidRequestException(errors, 'invalid request');
}
