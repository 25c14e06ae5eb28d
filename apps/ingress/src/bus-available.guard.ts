import { Injectable, ServiceUnavailableException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { Bus } from '@chorus/bus';
import { errorBody } from './http.errors';

/** How long a request waits for a reconnect in progress before it is refused. */
const RECONNECT_WAIT_MS = 1_000;

/**
 * While NATS is away (the connection is reconnecting for longer than a blip), a route that needs the
 * bus answers 503 within a second instead of after its requests' timeouts (a submission took 10 s to
 * fail): nothing is published, and Retry-After says when to try again. The open routes (health,
 * readiness, metrics) answer for themselves.
 */
@Injectable()
export class BusAvailableGuard implements CanActivate {
  constructor(
    private readonly bus: Bus,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http' || !this.bus.reconnecting) return true;
    if (this.reflector.getAllAndOverride<boolean>('chorus:public', [ctx.getHandler(), ctx.getClass()])) return true;
    if (await this.bus.connectedWithin(RECONNECT_WAIT_MS)) return true;
    ctx.switchToHttp().getResponse<Response>().setHeader('Retry-After', '1');
    throw new ServiceUnavailableException(errorBody(503, 'the message bus is unavailable right now (NATS disconnected, reconnecting); nothing was done, try again shortly'));
  }
}
