import { startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { defaultAnswerOptions } from './extractive.answer';
import { ResponderModule } from './responder.module';
import { RESPONDER_AGENT } from './tool-results.handler';

export function startResponder(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  // The answer quotes the lead results, the ones the search worker carries with their longer text.
  const answer = { ...defaultAnswerOptions(), maxDocuments: Math.max(1, config.search.leadDocuments) };
  return startAgent(RESPONDER_AGENT, ResponderModule.register(answer), {
    bus,
    consumer: { ...config.consumer, agent: RESPONDER_AGENT },
    log: log.child({ agent: RESPONDER_AGENT }),
  });
}
