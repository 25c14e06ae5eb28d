import { Controller, Get } from '@nestjs/common';
import { ChorusClient } from '@chorus/bus';

@Controller('v1/stats')
export class StatsController {
  constructor(private readonly client: ChorusClient) {}

  /** Totals (active, completed, failed, timed out, cancelled, duplicates, dead letters) and per-agent statistics. */
  @Get()
  stats(): Promise<unknown> {
    return this.client.stats();
  }
}
