import { Controller, Inject } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { deriveEnvelope, MessageTypes, type Envelope, type EnvelopeOf, type ToolResultsPayload } from '@chorus/envelope';
import { OnEnvelope, type HandlerContext } from '@chorus/bus';
import { composeAnswer, type AnswerOptions } from './extractive.answer';

export const RESPONDER_AGENT = 'responder';
export const ANSWER_OPTIONS = Symbol('ANSWER_OPTIONS');

/** Turns `tool_results` into the `response` that completes the workflow. */
@Controller()
export class ToolResultsHandler {
  constructor(@Inject(ANSWER_OPTIONS) private readonly options: AnswerOptions) {}

  @OnEnvelope(MessageTypes.ToolResults)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<EnvelopeOf<'response'>> {
    const tools = envelope.payload as ToolResultsPayload;
    const { answer, results, sources } = composeAnswer(tools.search_text, tools.results, this.options);
    ctx.log.debug({ results: results.length }, 'answered');
    return deriveEnvelope(envelope, {
      messageType: MessageTypes.Response,
      agent: RESPONDER_AGENT,
      nextSteps: [],
      payload: {
        query: tools.request.query,
        answer,
        results,
        provenance: {
          sources,
          profiles_used: tools.profiles_used,
          degraded: tools.degraded,
          fusion: tools.fusion,
          method: 'extractive',
        },
      },
    });
  }
}
