import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerConfig, type ConsumerInfo, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { retryTransient } from './transient-error';

export interface DurableConsumerSpec {
  stream: string;
  /** Shared by every replica: the stream hands each message to one of them. */
  durable: string;
  filter: string;
  ackWaitMs: number;
  maxDeliver: number;
  /** Messages processed at once by this process. */
  concurrency: number;
  /** Deliveries the server lets be unacknowledged at once, across replicas (flow control). */
  maxAckPending?: number;
  /**
   * For a single active consumer taking over from one that died (the hub): messages the previous
   * holder had in flight are delivered again at once and in stream order, before newer ones,
   * instead of after their ack wait.
   */
  resumeInOrder?: boolean;
  /**
   * How often a consumer that has received nothing for a while asks the server whether it should
   * have (default 10 s); see {@link DurableConsumer} on stalls.
   */
  stallCheckMs?: number;
}

/** Creates the durable pull consumer, or brings its settings up to date. */
export async function ensureDurableConsumer(bus: Bus, spec: DurableConsumerSpec, log?: Logger): Promise<ConsumerInfo | undefined> {
  const maxAckPending = spec.maxAckPending ?? Math.max(1000, spec.concurrency * 4);
  const config: Partial<ConsumerConfig> & { durable_name: string } = {
    durable_name: spec.durable,
    filter_subject: spec.filter,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver,
    max_ack_pending: maxAckPending,
  };
  try {
    const info = await bus.jsm.consumers.info(spec.stream, spec.durable);
    const c = info.config;
    if (
      c.filter_subject !== config.filter_subject ||
      c.ack_wait !== config.ack_wait ||
      c.max_deliver !== config.max_deliver ||
      c.max_ack_pending !== maxAckPending
    ) {
      // Replicas of one agent share this consumer: the last one started sets it for all. One that
      // counts on other settings waits for deliveries the consumer does not make (a step it retries
      // after the consumer's last delivery ends its workflow timed out, not failed), so say so.
      const changed = [
        c.max_deliver !== config.max_deliver && `max_deliver ${c.max_deliver} → ${config.max_deliver} (CHORUS_MAX_DELIVER)`,
        c.ack_wait !== config.ack_wait && `ack_wait ${(c.ack_wait ?? 0) / 1e6} ms → ${spec.ackWaitMs} ms (CHORUS_ACK_WAIT_MS)`,
        c.max_ack_pending !== maxAckPending && `max_ack_pending ${c.max_ack_pending} → ${maxAckPending} (CHORUS_CONCURRENCY)`,
      ].filter((x): x is string => typeof x === 'string');
      if (changed.length > 0) {
        log?.warn(
          { consumer: spec.durable, changed },
          `consumer ${spec.durable} had other settings (from an earlier run, or another replica): ${changed.join(', ')}; every replica of an agent must be started with the same values, or the ones started with the old ones retry or wait by them`,
        );
      }
      return await bus.jsm.consumers.update(spec.stream, spec.durable, {
        filter_subject: config.filter_subject,
        ack_wait: config.ack_wait,
        max_deliver: config.max_deliver,
        max_ack_pending: maxAckPending,
      });
    }
    return info;
  } catch (e) {
    if (!/not found/i.test(String((e as Error).message))) throw e;
    try {
      return await bus.jsm.consumers.add(spec.stream, config);
    } catch (addError) {
      // A replica created it between our look-up and our add.
      if (!isAlreadyThere(addError)) throw addError;
      return undefined;
    }
  }
}

/**
 * When the consumer has messages delivered but not acknowledged (its previous holder died), it is
 * recreated to start right after its ack floor: the unacknowledged messages come first, in order.
 * Messages above the floor that were acknowledged are delivered again too, and must be (and in
 * Chorus are) handled idempotently.
 */
async function resumeFromAckFloor(bus: Bus, spec: DurableConsumerSpec, log: Logger, resume: { from?: number }): Promise<void> {
  let info;
  try {
    info = await bus.jsm.consumers.info(spec.stream, spec.durable);
  } catch (e) {
    if (!/not found/i.test(String((e as Error).message))) throw e;
    // Deleted by an earlier try of this start, whose add did not go through (NATS slow or away):
    // recreated where that try meant to start it, not from the start of the stream (it replayed the
    // whole stream, and a hub losing its lease meanwhile did again at every takeover).
    if (resume.from !== undefined) await addAt(bus, spec, resume.from);
    return;
  }
  if (info.num_ack_pending === 0) return;
  // A consumer recreated here before never resumes below where it was recreated (nats-server reports
  // its floor as that start less one until an ack; the start is a floor in any case).
  const from = Math.max(info.ack_floor.stream_seq + 1, info.config.opt_start_seq ?? 0);
  log.warn({ consumer: spec.durable, unacknowledged: info.num_ack_pending, from_seq: from }, 'resuming in order from the ack floor');
  resume.from = from;
  await bus.jsm.consumers.delete(spec.stream, spec.durable);
  await addAt(bus, spec, from);
}

/** True when a consumer could not be added because one of that name exists (another replica added it first). */
function isAlreadyThere(e: unknown): boolean {
  return /already (exists|in use)/i.test(String((e as Error)?.message ?? e));
}

/** How the consumer of that name differs from the one `spec` describes (a push consumer, another filter), or null. */
function notThisConsumer(info: ConsumerInfo, spec: DurableConsumerSpec): string | null {
  if (info.config.deliver_subject) return `a push consumer delivering to ${info.config.deliver_subject}`;
  const filters = info.config.filter_subjects ?? (info.config.filter_subject ? [info.config.filter_subject] : []);
  if (filters.length !== 1 || filters[0] !== spec.filter) return `a consumer of ${filters.join(', ') || 'every subject'}, not ${spec.filter}`;
  return null;
}

/** Creates the durable consumer to deliver from stream sequence `from` on. */
async function addAt(bus: Bus, spec: DurableConsumerSpec, from: number): Promise<void> {
  await bus.jsm.consumers.add(spec.stream, {
    durable_name: spec.durable,
    filter_subject: spec.filter,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: from,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver,
    max_ack_pending: spec.maxAckPending ?? Math.max(1000, spec.concurrency * 4),
  });
}

/**
 * A loop over a durable pull consumer that processes up to `concurrency` messages at once and
 * stops pulling while that many are in flight. Processing (ack, nak, term) is the caller's.
 */
export class DurableConsumer {
  private messages?: ConsumerMessages;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Stream sequences of the messages being handled, with the most deliveries the server has made of
   * each, so a redelivery of one is not handled twice at once and its handler knows how many
   * deliveries the server has counted (they count towards max_deliver).
   */
  private readonly handling = new Map<number, number>();
  private readonly shutdown = new AbortController();
  private readonly linked = new Set<AbortController>();
  private loop?: Promise<void>;
  private waiter?: () => void;
  private stopped = false;
  private watchdog?: NodeJS.Timeout;
  private checking = false;
  /** When this process last received a message, and since when the server has said the consumer does not exist. */
  private lastDelivery = Date.now();
  private missingSince?: number;
  /** The consumer's acknowledgement floor (stream sequence) as last seen: where it is created again from, if it is gone. */
  private ackFloor = 0;
  /** When the stream was made, as seen at start: a stream made again numbers its messages from 1, and the floor above means nothing in it. */
  private streamCreated?: string;

  constructor(
    private readonly bus: Bus,
    readonly spec: DurableConsumerSpec,
    private readonly process: (m: JsMsg) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /**
   * Aborts `controller` when the consumer stops and its grace period is over (at once if it already
   * has); returns the unlink to call when its message is done. The consumer keeps the set and
   * aborts each one itself, so that no listener per message piles up on a shared signal.
   */
  linkShutdown(controller: AbortController): () => void {
    if (this.shutdown.signal.aborted) {
      controller.abort(this.shutdown.signal.reason);
      return () => undefined;
    }
    this.linked.add(controller);
    return () => this.linked.delete(controller);
  }

  /** How many times the server has delivered the message being handled at `seq` (redeliveries included). */
  deliveriesOf(seq: number): number | undefined {
    return this.handling.get(seq);
  }

  async start(): Promise<void> {
    // Creating the consumer can time out while a cluster elects leaders or is busy; each of these
    // steps is safe to repeat, so it is retried rather than failing the whole app's start.
    // Where a resume in order starts, kept across the tries below: one may delete the consumer and fail to add it again.
    const resume: { from?: number } = {};
    const consumer = await retryTransient(
      async () => {
        if (this.spec.resumeInOrder) await resumeFromAckFloor(this.bus, this.spec, this.log, resume);
        const info = await ensureDurableConsumer(this.bus, this.spec, this.log);
        if (info) this.ackFloor = info.ack_floor.stream_seq;
        this.streamCreated = await this.streamMadeAt();
        return this.bus.js.consumers.get(this.spec.stream, this.spec.durable);
      },
      this.log,
      `creating consumer ${this.spec.durable}`,
    );
    if (this.stopped) return;
    await this.pull(consumer);
    this.lastDelivery = Date.now();
    const every = this.spec.stallCheckMs ?? 10_000;
    this.watchdog = setInterval(() => void this.checkStalled(every), every);
    this.watchdog.unref();
  }

  /** When the stream was made, or undefined when it does not exist (or cannot be read now). */
  private async streamMadeAt(): Promise<string | undefined> {
    return this.bus.jsm.streams.info(this.spec.stream).then(
      (info) => info.created,
      () => undefined,
    );
  }

  /** Starts pulling: the loop over the messages runs until they are closed. */
  private async pull(consumer: Consumer): Promise<void> {
    // Short pulls (and heartbeats at half of them) notice a lost server in seconds, not half a minute.
    this.messages = await consumer.consume({ max_messages: Math.max(8, this.spec.concurrency), expires: 5000 });
    this.loop = this.run(this.messages);
  }

  /**
   * A consumer can stop receiving without a word, and the NATS client does not recover it:
   * - deleted on the server (by an operator, or lost by a cluster), the client waits for it to come
   *   back, and every workflow then timed out waiting for that agent until its process restarted;
   * - after a NATS cluster lost its quorum, the server held messages for a consumer whose replicas
   *   had no pull request registered (`num_waiting` 0), again until a process restarted.
   * So a consumer that has received nothing for two checks while it has room asks the server: one
   * that has messages for it is pulled anew (the old pull closed and its loop ended first: one loop
   * at a time keeps the hub's envelopes in order); one the server has not had for 2.5 checks is
   * created again from its acknowledgement floor as last seen (at start or at an earlier check), and
   * what comes again is handled idempotently.
   */
  private async checkStalled(every: number): Promise<void> {
    if (this.stopped || this.checking || this.inFlight.size >= this.spec.concurrency || Date.now() - this.lastDelivery < 2 * every) return;
    this.checking = true;
    try {
      let info;
      try {
        info = await this.bus.jsm.consumers.info(this.spec.stream, this.spec.durable);
        this.missingSince = undefined;
        const foreign = notThisConsumer(info, this.spec);
        if (foreign) {
          // Deleted and made again as something else (a user allowed to manage consumers): its pulls
          // went unanswered without a word, and nothing was ever pending. Made again as it was, from
          // the acknowledgement floor last seen here (not the impostor's).
          const from = this.ackFloor + 1;
          this.log.error({ consumer: this.spec.durable, found: foreign, from_seq: from }, 'consumer is no longer the one this agent pulls from; replacing it');
          await this.bus.jsm.consumers.delete(this.spec.stream, this.spec.durable).catch((err: unknown) => {
            // Gone already (another replica's doing) is as good; anything else (no permission) is said.
            if (!/not found/i.test(String((err as Error)?.message))) this.log.error({ err, consumer: this.spec.durable }, 'could not delete the consumer to replace it');
          });
          // Another replica that replaced it first did as well; pull from that one.
          await addAt(this.bus, this.spec, from).catch((err: unknown) => {
            if (!isAlreadyThere(err)) throw err;
          });
          await this.messages?.close();
          await this.loop;
          if (!this.stopped) await this.pull(await this.bus.js.consumers.get(this.spec.stream, this.spec.durable));
          return;
        }
        this.ackFloor = info.ack_floor.stream_seq;
      } catch (e) {
        // The stream gone too (a NATS server restarted without its store): the hub makes it again.
        if (!/(consumer|stream) not found/i.test(String((e as Error).message))) return;
        this.missingSince ??= Date.now();
        if (Date.now() - this.missingSince < 2.5 * every || this.stopped) return;
        // Not from the start of the stream (millions of messages), nor from after the last message this
        // process received (another replica may hold earlier ones unacknowledged, or due again). A
        // stream made again since (its messages numbered from 1 again) is read from its start.
        const created = await this.streamMadeAt();
        if (created === undefined) return; // no stream yet: at a later check
        const remade = this.streamCreated !== undefined && created !== this.streamCreated;
        const from = remade ? 1 : this.ackFloor + 1;
        this.log.error({ consumer: this.spec.durable, from_seq: from, ...(remade ? { stream_made_again: created } : {}) }, 'consumer is gone from the server; creating it again');
        if (remade) this.ackFloor = 0;
        this.streamCreated = created;
        this.missingSince = undefined;
        await addAt(this.bus, this.spec, from).catch((err: unknown) => {
          // Another replica created it first: that is as good.
          if (!isAlreadyThere(err)) this.log.warn({ err, consumer: this.spec.durable }, 'creating the consumer again failed; will retry');
        });
        return;
      }
      // Nothing to deliver, or the server holds it back by right (as many unacknowledged as allowed: a replica that died holds some until their ack wait).
      const limit = info.config.max_ack_pending ?? -1;
      if (info.num_pending === 0 || (limit > 0 && info.num_ack_pending >= limit) || this.stopped) return;
      this.log.warn({ consumer: this.spec.durable, pending: info.num_pending, waiting: info.num_waiting, idle_ms: Date.now() - this.lastDelivery }, 'consumer stalled: messages pending, none received; pulling anew');
      this.lastDelivery = Date.now();
      await this.messages?.close();
      await this.loop;
      if (!this.stopped) await this.pull(await this.bus.js.consumers.get(this.spec.stream, this.spec.durable));
    } catch (e) {
      this.log.warn({ err: e, consumer: this.spec.durable }, 'checking the consumer for a stall failed');
    } finally {
      this.checking = false;
    }
  }

  /** Stops pulling, lets in-flight messages finish (up to `graceMs`), then aborts them. */
  async stop(graceMs = 5000): Promise<void> {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    while (this.checking) await new Promise((r) => setTimeout(r, 10));
    await this.messages?.close();
    await this.loop;
    const timer = setTimeout(() => {
      this.shutdown.abort(new Error('shutting down'));
      for (const controller of this.linked) controller.abort(this.shutdown.signal.reason);
      this.linked.clear();
    }, graceMs);
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(timer);
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const m of messages) {
        const seq = m.info.streamSequence;
        this.lastDelivery = Date.now();
        const handled = this.handling.get(seq);
        if (handled !== undefined) {
          // The server gave up waiting and sent again a message this process is still handling (a
          // busy process can miss its ack_wait): keep the one under way, tell the server so.
          this.handling.set(seq, Math.max(handled, m.info.deliveryCount));
          m.working();
          continue;
        }
        while (this.inFlight.size >= this.spec.concurrency) {
          await new Promise<void>((resolve) => (this.waiter = resolve));
        }
        this.handling.set(seq, m.info.deliveryCount);
        const p: Promise<void> = this.process(m)
          .catch((e) => this.log.error({ err: e, subject: m.subject, consumer: this.spec.durable }, 'message processing failed'))
          .finally(() => {
            this.handling.delete(seq);
            this.inFlight.delete(p);
            const w = this.waiter;
            this.waiter = undefined;
            w?.();
          });
        this.inFlight.add(p);
      }
    } catch (e) {
      this.log.error({ err: e, consumer: this.spec.durable }, 'consumer loop ended with an error');
    }
  }
}

export interface JsonMessageMeta {
  subject: string;
  streamSeq: number;
  delivery: number;
}

/**
 * A durable consumer of JSON messages (dead letters, duplicate notices): the handler's success acks,
 * its failure naks for redelivery, and a body that is not JSON is logged and terminated.
 */
export function createJsonConsumer<T>(
  bus: Bus,
  spec: DurableConsumerSpec,
  handle: (value: T, meta: JsonMessageMeta) => Promise<void>,
  log: Logger,
): DurableConsumer {
  return new DurableConsumer(
    bus,
    spec,
    async (m) => {
      let value: T;
      try {
        value = m.json<T>();
      } catch (e) {
        log.warn({ err: e, subject: m.subject, stream_seq: m.seq }, 'message is not JSON; dropped');
        m.term();
        return;
      }
      try {
        await handle(value, { subject: m.subject, streamSeq: m.seq, delivery: m.info.deliveryCount });
        m.ack();
      } catch (e) {
        log.warn({ err: e, subject: m.subject }, 'message handling failed; will retry');
        m.nak(Math.min(5000, 100 * 2 ** m.info.deliveryCount));
      }
    },
    log,
  );
}
