export { composeAnswer, defaultAnswerOptions, type Answer, type AnswerOptions } from './extractive.answer';
export { startResponder } from './responder.app';
export { RESPONDER_AGENT } from './tool-results.handler';
