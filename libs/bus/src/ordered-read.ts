import { DeliverPolicy, jetstream, type JetStreamClient, type JsMsg, type PushConsumer } from '@nats-io/jetstream';
import { TimeoutError, type NatsConnection } from '@nats-io/transport-node';

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
 * consumer, and stops at the last one present when the read began (or once the server has nothing
 * left for it: what it counted may have been removed meanwhile). An empty match returns at once.
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
  const oc = await createReader(js, stream, {
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
  // A watchdog for a read that stalls: the pending count a message carries can include a value
  // that a newer value of the same key has since removed (a bucket keeping one value per key), so
  // the read would wait for a message that never comes, until the next write anywhere it matches
  // (a hub's `GET /v1/workflows/:id` waited up to 5 s on this). If nothing arrived for
  // IDLE_RECHECK_MS while the caller is not holding a message, the server has nothing pending for
  // the consumer and has sent it nothing beyond the last message received here (same consumer, same
  // delivery sequence: nothing in flight, nothing buffered, no reset under way), the read is complete.
  let lastArrival = Date.now();
  let last: { consumer: string; deliverySeq: number } | null = null;
  let holding = false;
  let checking = false;
  const watchdog = setInterval(() => {
    if (checking || holding || Date.now() - lastArrival < IDLE_RECHECK_MS) return;
    checking = true;
    oc.info()
      .then((info) => {
        const sentBeyond = last === null ? info.delivered.consumer_seq > 0 : info.name !== last.consumer || info.delivered.consumer_seq > last.deliverySeq;
        if (info.num_pending === 0 && !sentBeyond && !holding && Date.now() - lastArrival >= IDLE_RECHECK_MS) void iter.close();
      })
      .catch(() => undefined)
      .finally(() => (checking = false));
  }, IDLE_RECHECK_MS / 4);
  try {
    for await (const m of iter) {
      lastArrival = Date.now();
      last = { consumer: m.info.consumer, deliverySeq: m.info.deliverySequence };
      holding = true;
      yield m;
      holding = false;
      lastArrival = Date.now();
      if (m.info.pending === 0) break;
    }
  } finally {
    clearInterval(watchdog);
    await iter.close();
    // Closing only unsubscribes: the server would keep the consumer for its inactivity threshold
    // (five minutes, set by the client), so a status or history read every few milliseconds left
    // thousands behind, and a restarted server then took seconds to recover them all. The read is
    // over; nothing waits for the delete.
    void oc.delete().catch(() => undefined);
  }
}

/** How long a read waits for its next message before it asks the server whether one is still to come. */
const IDLE_RECHECK_MS = 250;

/** How long one attempt to create a read's consumer may take, and how many rounds a read makes. */
const CREATE_TIMEOUT_MS = 1000;
const CREATE_ROUNDS = 4;
const shortTimeoutClients = new WeakMap<JetStreamClient, JetStreamClient>();

/**
 * The read's ordered consumer. On a cluster that lost a node, the server (2.9) may place this
 * one-replica consumer on the lost node, still one of the stream's peers, and the create request
 * then goes unanswered until it times out: about one read in three failed after five seconds (the
 * client's whole timeout) though the cluster served everything else. So each attempt gets a short
 * timeout, and after one has timed out, two are made at once (each placed on its own), the first
 * created is used and the other deleted: four rounds finish within four seconds, and all of them
 * fail only when seven placements in a row land on the lost node.
 */
async function createReader(js: JetStreamClient, stream: string, config: Parameters<JetStreamClient['consumers']['getPushConsumer']>[1]): Promise<PushConsumer> {
  const quick = shortTimeoutClient(js);
  const create = () => quick.consumers.getPushConsumer(stream, config);
  for (let round = 1; ; round++) {
    const attempts = round === 1 ? [create()] : [create(), create()];
    try {
      const winner = await Promise.any(attempts);
      for (const other of attempts) void other.then((c) => c !== winner && c.delete().catch(() => undefined), () => undefined);
      return winner;
    } catch (e) {
      const errors = e instanceof AggregateError ? e.errors : [e];
      if (!errors.every(isTimeout) || round >= CREATE_ROUNDS) throw errors[0];
    }
  }
}

function isTimeout(e: unknown): boolean {
  return e instanceof TimeoutError || (e as { cause?: unknown })?.cause instanceof TimeoutError || (e as Error)?.name === 'TimeoutError';
}

function shortTimeoutClient(js: JetStreamClient): JetStreamClient {
  let quick = shortTimeoutClients.get(js);
  if (!quick) {
    // The client's connection (public on nats.js's implementation); without it, the client itself.
    const nc = (js as unknown as { nc?: NatsConnection }).nc;
    quick = nc ? jetstream(nc, { ...js.getOptions(), timeout: Math.min(CREATE_TIMEOUT_MS, js.getOptions().timeout ?? CREATE_TIMEOUT_MS) }) : js;
    shortTimeoutClients.set(js, quick);
  }
  return quick;
}
