import { Controller, Inject } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { deriveEnvelope, MessageTypes, StepFailedError, type Envelope, type EnvelopeOf, type QueryPayload } from '@chorus/envelope';
import { OnEnvelope, type HandlerContext } from '@chorus/bus';
import { classifyQuery, withTypoSignals } from './intent.rules';
import type { TypoCheck } from './typo.check';

export const INTENT_AGENT = 'intent';
export const INTENT_TYPO_CHECK = Symbol('INTENT_TYPO_CHECK');

/** Turns a `query` into a `classification_result`. */
@Controller()
export class QueryHandler {
  constructor(@Inject(INTENT_TYPO_CHECK) private readonly typos: TypoCheck) {}

  @OnEnvelope(MessageTypes.Query)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<EnvelopeOf<'classification_result'>> {
    const request = envelope.payload as QueryPayload;
    const rules = classifyQuery(request);
    if (!rules.search_text) {
      throw new StepFailedError('EMPTY_SEARCH_TEXT', 'the query has nothing to search once its profile: directives are removed');
    }
    // A caller who named the profiles has chosen already: typo hints would change nothing.
    const classification = rules.explicit_profiles.length > 0 ? rules : withTypoSignals(rules, await this.typos.findTypos(rules.search_text, ctx.deadline));
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
