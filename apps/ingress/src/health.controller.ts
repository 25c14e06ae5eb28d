import { Controller, Get, Header, Res, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { Bus } from '@chorus/bus';
import { errorBody } from './http.errors';
import { Public } from './tenant.guard';

/** Liveness and readiness for orchestrators and load balancers. */
@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  constructor(private readonly bus: Bus) {}

  /** The process is up. */
  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** NATS is connected and the workflow stream answers. */
  @Get('ready')
  async ready(): Promise<Record<string, unknown>> {
    const r = await this.bus.readiness();
    if (!r.ready) throw new ServiceUnavailableException({ ...errorBody(503, 'not ready'), ...r.detail });
    return { status: 'ready', ...r.detail };
  }

  /** Prometheus metrics of this process (every app in it, under `npm start`). */
  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metrics(@Res() res: Response): Promise<void> {
    res.setHeader('Content-Type', this.bus.metrics.contentType);
    res.send(await this.bus.metrics.text());
  }
}
