import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/** Header names Chorus mirrors from the envelope, so tools can route and trace without parsing JSON. */
export const ChorusHeaders = Object.freeze({
  CorrelationId: 'Chorus-Correlation-Id',
  MessageId: 'Chorus-Message-Id',
  CausationId: 'Chorus-Causation-Id',
  MessageType: 'Chorus-Message-Type',
  Agent: 'Chorus-Agent',
  Traceparent: 'traceparent',
  /** On a dead letter: why it was dead-lettered. */
  DeadLetterReason: 'Chorus-Dead-Letter-Reason',
  /** On every try of a hedged request: one id, so a replica works it out once however many of its tries arrive meanwhile. */
  RequestId: 'Chorus-Request-Id',
} as const);

/** NATS headers from name/value pairs (for tools that re-publish raw messages). */
export function createHeaders(entries: Iterable<[string, string]>): MsgHdrs {
  const h = natsHeaders();
  for (const [k, v] of entries) h.set(k, v);
  return h;
}
