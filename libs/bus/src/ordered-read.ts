import { DeliverPolicy, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';

export interface OrderedReadOptions {
  /** Every message (default), or only the last per subject (a KV bucket's live values). */
  lastPerSubject?: boolean;
  /** Skip messages stored before this time. */
  startTime?: Date;
  /** Skip messages with a lower stream sequence (instead of `startTime`). */
  startSeq?: number;
  /** Deliver headers only (and the size), not bodies. */
  headersOnly?: boolean;
}

/**
 * Reads the messages of `stream` that match `filter`, in stream order, through an ordered push
 * consumer, and stops at the last one present when the read began. An empty match returns at once.
 */
export async function* readOrdered(
  js: JetStreamClient,
  stream: string,
  filter: string,
  options: OrderedReadOptions = {},
): AsyncGenerator<JsMsg> {
  const deliver_policy = options.lastPerSubject
    ? DeliverPolicy.LastPerSubject
    : options.startSeq
      ? DeliverPolicy.StartSequence
      : options.startTime
        ? DeliverPolicy.StartTime
        : DeliverPolicy.All;
  const oc = await js.consumers.getPushConsumer(stream, {
    filter_subjects: filter,
    deliver_policy,
    headers_only: options.headersOnly ?? false,
    ...(options.startSeq && !options.lastPerSubject ? { opt_start_seq: options.startSeq } : {}),
    ...(options.startTime && !options.startSeq && !options.lastPerSubject ? { opt_start_time: options.startTime.toISOString() } : {}),
  });
  if ((await oc.info()).num_pending === 0) {
    await oc.delete().catch(() => undefined);
    return;
  }
  const iter = await oc.consume();
  try {
    for await (const m of iter) {
      yield m;
      if (m.info.pending === 0) break;
    }
  } finally {
    await iter.close();
  }
}
