import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
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
  async ready(): Promise<{ status: 'ready'; nats: string; stream: string }> {
    if (this.bus.nc.isClosed()) throw new ServiceUnavailableException(errorBody(503, 'NATS connection is closed'));
    try {
      await this.bus.jsm.streams.info(this.bus.options.workflowStream);
    } catch (e) {
      throw new ServiceUnavailableException(errorBody(503, `workflow stream is not reachable: ${(e as Error).message}`));
    }
    return { status: 'ready', nats: this.bus.nc.getServer(), stream: this.bus.options.workflowStream };
  }
}
