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
} as const);
