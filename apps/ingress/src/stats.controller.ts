import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ChorusClient } from '@chorus/bus';
import { TENANT_ID_PATTERN } from '@chorus/envelope';
import { InvalidRequestException } from './http.errors';
import { QueryParams } from './query-params.guard';
import { Tenant, scopedTenant, type TenantScope } from './tenant.guard';

@ApiTags('operations')
@Controller('v1/stats')
export class StatsController {
  constructor(private readonly client: ChorusClient) {}

  /** Totals (active, completed, failed, timed out, cancelled, duplicates, dead letters) and per-agent statistics. */
  @Get()
  @QueryParams('tenant_id')
  @ApiOperation({ summary: 'Totals and per-agent statistics' })
  stats(@Query('tenant_id') tenantId: string | undefined, @Tenant() scope: TenantScope): Promise<unknown> {
    if (tenantId !== undefined && !TENANT_ID_PATTERN.test(tenantId)) {
      throw new InvalidRequestException([{ field: 'tenant_id', messages: ['tenant_id must match [a-z0-9][a-z0-9_-]{0,62}'] }], 'invalid query string');
    }
    return this.client.stats(scope.authenticated ? scopedTenant(scope, tenantId) : tenantId);
  }
}
