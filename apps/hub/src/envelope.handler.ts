import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { ALL_MESSAGE_TYPES, OnEnvelope, type HandlerContext } from '@chorus/bus';
import type { Envelope } from '@chorus/envelope';
import { HubService } from './hub.service';

/** Every envelope of the workflow stream goes through here into the ledger. */
@Controller()
export class EnvelopeHandler {
  constructor(private readonly hub: HubService) {}

  @OnEnvelope(ALL_MESSAGE_TYPES)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<void> {
    await this.hub.onEnvelope(envelope, { idempotencyKey: ctx.idempotencyKey, streamSeq: ctx.streamSeq }, ctx.log, () => ctx.storedAt);
  }
}
