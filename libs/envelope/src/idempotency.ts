import type { MessageType } from './message-type';

const PART_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The idempotency key of a logical message: `<correlation_id>.<message_type>.<agent>[.<part>]`.
 * It is the `Nats-Msg-Id` of the publish, so a re-publish of the same logical message (a retry,
 * a redelivered handler) is dropped by the stream, and the hub records each key once per workflow.
 * `part` distinguishes several messages of one type from one agent in one workflow (a step used
 * twice, a status transition).
 */
export function idempotencyKey(
  correlationId: string,
  messageType: MessageType,
  agent: string,
  part?: string,
): string {
  if (part !== undefined && !PART_PATTERN.test(part)) {
    throw new RangeError(`idempotency key part must match ${PART_PATTERN.source}: ${JSON.stringify(part)}`);
  }
  const base = `${correlationId}.${messageType}.${agent}`;
  return part === undefined ? base : `${base}.${part}`;
}
