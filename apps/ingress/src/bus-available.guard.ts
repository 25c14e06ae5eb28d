import { Injectable, ServiceUnavailableException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { Bus } from '@chorus/bus';
import { errorBody } from './http.errors';
import { isPublic } from './tenant.guard';

/** How long a request waits for a reconnect in progress before it is refused. */
const RECONNECT_WAIT_MS = 1_000;

export const BUS_UNAVAILABLE = 'the message bus is unavailable right now (NATS disconnected, reconnecting); nothing was done, try again shortly';

/** True when NATS is away for longer than a blip: a request needing the bus is refused (503), not left to time out. */
export async function busUnavailable(bus: Bus): Promise<boolean> {
  return bus.reconnecting && !(await bus.connectedWithin(RECONNECT_WAIT_MS));
}

/**
 * While NATS is away (the connection is reconnecting for longer than a blip), a route that needs the
 * bus answers 503 within a second instead of after its requests' timeouts (a submission took 10 s to
 * fail): nothing is published, and Retry-After says when to try again. The open routes (health,
 * readiness, metrics) answer for themselves; `/a2a` does the same in its own middleware.
 */
@Injectable()
export class BusAvailableGuard implements CanActivate {
  constructor(
    private readonly bus: Bus,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http' || !this.bus.reconnecting || isPublic(this.reflector, ctx)) return true;
    if (!(await busUnavailable(this.bus))) return true;
    ctx.switchToHttp().getResponse<Response>().setHeader('Retry-After', '1');
    throw new ServiceUnavailableException(errorBody(503, BUS_UNAVAILABLE));
  }
}
