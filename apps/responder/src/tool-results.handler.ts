import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { deriveEnvelope, MessageTypes, type Envelope, type EnvelopeOf, type ToolResultsPayload } from '@chorus/envelope';
import { OnEnvelope, type HandlerContext } from '@chorus/bus';
import { composeAnswer } from './extractive.answer';

export const RESPONDER_AGENT = 'responder';

/** Turns `tool_results` into the `response` that completes the workflow. */
@Controller()
export class ToolResultsHandler {
  @OnEnvelope(MessageTypes.ToolResults)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<EnvelopeOf<'response'>> {
    const tools = envelope.payload as ToolResultsPayload;
    const { answer, results, sources } = composeAnswer(tools.search_text, tools.results);
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
