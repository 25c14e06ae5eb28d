import type { Envelope } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';

/** What a handler gets besides its envelope. */
export interface HandlerContext {
  /** A child logger bound with correlation_id, causation_id, message_id, subject and agent. */
  readonly log: Logger;
  /** The workflow's absolute deadline. */
  readonly deadline: Date;
  /** Aborted when the deadline passes or the process shuts down. */
  readonly signal: AbortSignal;
  /** The subject the envelope arrived on. */
  readonly subject: string;
  /** 1 on the first delivery; counts up on redelivery. */
  readonly delivery: number;
  /** The envelope's idempotency key: its `Nats-Msg-Id`, or derived from it when published without one. */
  readonly idempotencyKey: string;
  /** Its sequence in the workflow stream: a redelivery has the same, a re-publish a new one. */
  readonly streamSeq: number;
  /**
   * When the stream stored it (ms since the epoch, by the server's clock, which the stream's
   * duplicate window also runs on): unlike the envelope's `timestamp`, not up to its publisher's clock.
   */
  readonly storedAt: number;
  /** Tells the server the handler is still working, so it does not redeliver yet. */
  working(): void;
}

/** An envelope to publish, with the part that tells apart several of one type from one agent. */
export interface Outbound {
  envelope: Envelope;
  part?: string;
}

/** A handler publishes what it returns, after it returns; then its input is acked. */
export type HandlerResult = void | undefined | Envelope | Outbound | Array<Envelope | Outbound>;

export type EnvelopeHandler = (envelope: Envelope, ctx: HandlerContext) => Promise<HandlerResult>;

export function toOutbound(result: HandlerResult): Outbound[] {
  if (!result) return [];
  const list = Array.isArray(result) ? result : [result];
  return list.map((item) => ('envelope' in item && !('message_id' in item) ? (item as Outbound) : { envelope: item as Envelope }));
}
