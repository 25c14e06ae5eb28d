import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ChorusClient } from '@chorus/bus';
import { InvalidRequestException, tenantIdErrors } from './http.errors';
import { QueryParams } from './query-params.guard';
import { Tenant, scopedTenant, type TenantScope } from './tenant.guard';
import { ApiCommonResponses, ApiTenantResponses } from './openapi';

@ApiTags('operations')
@ApiCommonResponses()
@ApiTenantResponses()
@Controller('v1/stats')
export class StatsController {
  constructor(private readonly client: ChorusClient) {}

  /** Totals (active, completed, failed, timed out, cancelled, duplicates, dead letters) and per-agent statistics. */
  @Get()
  @QueryParams('tenant_id')
  @ApiOperation({ summary: 'Totals and per-agent statistics' })
  @ApiResponse({ status: 200, description: '`{totals, totals_since, agents, window_ms}`: workflows by status, duplicates dropped, late envelopes, retries and dead letters; per agent over the last `window_ms`, steps, errors, error rate and p50/p99 latency' })
  stats(@Query('tenant_id') tenantId: string | undefined, @Tenant() scope: TenantScope): Promise<unknown> {
    const errors = tenantIdErrors(tenantId);
    if (errors.length > 0) throw new InvalidRequestException(errors, 'invalid query string');
    return this.client.stats(scope.authenticated ? scopedTenant(scope, tenantId) : tenantId);
  }
}
