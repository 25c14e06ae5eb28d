import { DeliverPolicy, type JetStreamClient, type JsMsg, type OrderedPushConsumerOptions, type PushConsumer } from '@nats-io/jetstream';
import { nuid } from '@nats-io/transport-node';

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

/** How long a read waits for its consumer before it asks for another, and how many it asks for then. */
const HEDGE_AFTER_MS = 1000;
const HEDGES = [2, 2];

/**
 * The read's ordered consumer, created with hedged requests. On a cluster that lost a node, the
 * server (2.9) may place this one-replica consumer on the lost node, still one of the stream's
 * peers, and leave the create unanswered until the client's timeout: about one read in three failed
 * after five seconds, though the cluster served everything else. So when a create has not answered
 * within a second, two more are asked for (each placed on its own), and two more a second later;
 * the first created is used. Each attempt has its own name, so one created late, or after its
 * request timed out, is deleted too. On a single server that answers, this is one request.
 */
async function createReader(js: JetStreamClient, stream: string, config: Partial<OrderedPushConsumerOptions>): Promise<PushConsumer> {
  const attempts: Array<{ prefix: string; created: Promise<PushConsumer> }> = [];
  const start = (n: number) => {
    for (let i = 0; i < n; i++) {
      const prefix = `rd_${nuid.next()}`;
      attempts.push({ prefix, created: js.consumers.getPushConsumer(stream, { ...config, name_prefix: prefix }) });
    }
  };
  start(1);
  let winner: PushConsumer | undefined;
  try {
    for (const hedge of [...HEDGES, 0]) {
      const pending = attempts.map((a) => a.created);
      const settled = hedge > 0 ? Promise.race([Promise.any(pending), delay(HEDGE_AFTER_MS)]) : Promise.any(pending);
      winner = (await settled) ?? undefined;
      if (winner) return winner;
      start(hedge);
    }
    throw new Error('unreachable');
  } catch (e) {
    throw e instanceof AggregateError ? e.errors[0] : e;
  } finally {
    // Every other attempt: deleted once created, or by name in case the server created it after
    // the request timed out.
    for (const a of attempts) {
      void a.created.then(
        (c) => c !== winner && c.delete().catch(() => undefined),
        () => deleteByName(js, stream, `${a.prefix}_1`),
      );
    }
  }
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

/** Best effort: a consumer the server may have created for a request that timed out. */
function deleteByName(js: JetStreamClient, stream: string, name: string): void {
  void js
    .jetstreamManager(false)
    .then((jsm) => jsm.consumers.delete(stream, name))
    .catch(() => undefined);
}
