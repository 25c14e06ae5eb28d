import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { deriveEnvelope, MessageTypes, StepFailedError, type Envelope, type EnvelopeOf, type QueryPayload } from '@chorus/envelope';
import { OnEnvelope, type HandlerContext } from '@chorus/bus';
import { classifyQuery } from './intent.rules';

export const INTENT_AGENT = 'intent';

/** Turns a `query` into a `classification_result`. */
@Controller()
export class QueryHandler {
  @OnEnvelope(MessageTypes.Query)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<EnvelopeOf<'classification_result'>> {
    const request = envelope.payload as QueryPayload;
    const classification = classifyQuery(request);
    if (!classification.search_text) {
      throw new StepFailedError('EMPTY_SEARCH_TEXT', 'the query has nothing to search once its profile: directives are removed');
    }
    ctx.log.debug({ intent: classification.intent, confidence: classification.confidence }, 'classified');
    return deriveEnvelope(envelope, {
      messageType: MessageTypes.ClassificationResult,
      agent: INTENT_AGENT,
      targetAgent: 'planner',
      nextSteps: ['planner', 'search', 'responder'],
      payload: { request, ...classification },
    });
  }
}
