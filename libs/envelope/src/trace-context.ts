import { TRACEPARENT_PATTERN } from './patterns';
import { randomHex } from './random-ids';

/** A W3C trace context: one trace id for the workflow, a new span id per hop. */
export interface TraceContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

export function parseTraceparent(value: string | null | undefined): TraceContext | null {
  if (!value || !TRACEPARENT_PATTERN.test(value)) return null;
  const [, traceId, spanId, flags] = value.split('-');
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

export function toTraceparent(ctx: TraceContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.sampled ? '01' : '00'}`;
}

/** A new root span, or a child of `parent` (same trace id, new span id). */
export function createTraceparent(parent?: string | null): string {
  const spanId = randomHex(8);
  const parsed = parseTraceparent(parent);
  if (parsed) return toTraceparent({ ...parsed, spanId });
  return toTraceparent({ traceId: randomHex(16), spanId, sampled: true });
}
