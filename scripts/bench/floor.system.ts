import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { spawnHopWorker, startBenchNats, type ChildApp } from './bench.support';
import { PendingWorkflows } from './load';
import type { SystemId, SystemUnderTest } from './system.types';
import { AGENT_HOPS, createRequest, nextHop, type AgentHop, type BenchMessage, type HopStep, type HopWork } from './workload';

/**
 * The floor: the same five hops hand-written on the raw NATS client, nothing else.
 *
 * - core: each hop subscribes to `floor.core.<hop>` and publishes the next message; at most once.
 * - JetStream: every message is stored in one file-backed stream (`FLOOR_WF`, 2-minute duplicate
 *   window, like Chorus's `CHORUS_WF`). Each hop reads through its own durable pull consumer
 *   (explicit ack, 64 messages in flight, as Chorus's agents), publishes the next message with a
 *   `Nats-Msg-Id` and awaits the stream's PubAck, then acks its input. Durable and deduplicated,
 *   but no envelope validation, no ledger, and (but in its same-work variant) no real work.
 */
const STREAM = 'FLOOR_WF';
const IN_FLIGHT = 64;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type FloorVariant = 'core' | 'js';

function subjectOf(variant: FloorVariant, hop: AgentHop | 'done', id: string): string {
  return variant === 'core' ? `floor.core.${hop}` : `floor.js.${hop}.${id}`;
}

/** The hop side (runs in hop-worker): one connection per hop, as independent services would have. */
export async function startFloorHops(variant: FloorVariant, url: string, hops: readonly AgentHop[], applyHop: HopStep): Promise<() => Promise<void>> {
  const connections: NatsConnection[] = [];
  const stops: Array<() => Promise<void>> = [];
  for (const hop of hops) {
    const nc = await connect({ servers: [url], name: `floor-${variant}-${hop}`, noAsyncTraces: true });
    connections.push(nc);
    const step = (data: Uint8Array): { id: string; out: Uint8Array } => {
      const m = applyHop(JSON.parse(decoder.decode(data)) as BenchMessage, hop);
      return { id: m.id, out: encoder.encode(JSON.stringify(m)) };
    };
    if (variant === 'core') {
      nc.subscribe(subjectOf('core', hop, ''), {
        callback: (_e, msg) => {
          const { out } = step(msg.data);
          nc.publish(subjectOf('core', nextHop(hop), ''), out);
        },
      });
      await nc.flush();
      continue;
    }
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const durable = `floor_${hop}`;
    await jsm.consumers.add(STREAM, {
      durable_name: durable,
      filter_subject: `floor.js.${hop}.*`,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(30_000),
      max_deliver: 5,
      max_ack_pending: 1000,
    });
    const messages = await (await js.consumers.get(STREAM, durable)).consume({ max_messages: IN_FLIGHT });
    const inFlight = new Set<Promise<void>>();
    let waiter: (() => void) | undefined;
    const handle = async (m: JsMsg) => {
      const { id, out } = step(m.data);
      await js.publish(subjectOf('js', nextHop(hop), id), out, { msgID: `${id}.${hop}` });
      m.ack();
    };
    // The same loop as Chorus's DurableConsumer: up to IN_FLIGHT at once, pulling paused while full.
    const loop = (async () => {
      for await (const m of messages) {
        while (inFlight.size >= IN_FLIGHT) await new Promise<void>((resolve) => (waiter = resolve));
        const p: Promise<void> = handle(m)
          .catch(() => m.nak(100))
          .finally(() => {
            inFlight.delete(p);
            const w = waiter;
            waiter = undefined;
            w?.();
          });
        inFlight.add(p);
      }
    })();
    stops.push(async () => {
      await messages.close();
      await loop;
      await Promise.allSettled([...inFlight]);
    });
  }
  return async () => {
    for (const s of stops) await s();
    await Promise.all(connections.map((nc) => nc.drain()));
  };
}

/** The driver side: a fresh server, the hop process(es), and a client that plays the ingress. */
export async function startFloorSystem(id: SystemId, variant: FloorVariant, processPerHop: boolean, work: HopWork = 'trivial'): Promise<SystemUnderTest> {
  const nats = await startBenchNats();
  const workers: ChildApp[] = [];
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({ servers: [nats.url], name: `bench-${id}`, noAsyncTraces: true });
    const js = jetstream(nc);
    if (variant === 'js') {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({
        name: STREAM,
        subjects: ['floor.js.>'],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        duplicate_window: nanos(120_000),
        max_age: nanos(7 * 24 * 3600_000),
      });
    }
    const groups = processPerHop ? AGENT_HOPS.map((h) => [h]) : [[...AGENT_HOPS]];
    for (const hops of groups) {
      workers.push(spawnHopWorker([`floor-${variant}`, hops.join(','), work], { NATS_URL: nats.url }, `floor-${variant} ${hops.join(',')}`));
    }
    await Promise.all(workers.map((w) => w.waitFor(/hops ready/)));

    const pending = new PendingWorkflows(30_000);
    const conn = nc;
    conn.subscribe(variant === 'core' ? 'floor.core.done' : 'floor.js.done.*', {
      callback: (_e, msg) => pending.settle((JSON.parse(decoder.decode(msg.data)) as BenchMessage).id),
    });
    await conn.flush();
    const tag = Date.now().toString(36);
    let next = 0; // ids stay unique across load levels (the JetStream floor deduplicates on them)
    return {
      id,
      url: nats.url,
      monitorUrl: nats.monitorUrl,
      processes: () => Object.fromEntries([['nats-server', nats.pid], ...workers.map((w, i) => [`hops-${i}`, w.child.pid])]),
      notes: async () => [],
      run: async (seq) => {
        const wid = `${tag}-${next++}`;
        const done = pending.wait(wid);
        const data = encoder.encode(JSON.stringify(createRequest(wid, seq)));
        if (variant === 'core') conn.publish(subjectOf('core', 'intent', wid), data);
        else {
          try {
            await js.publish(subjectOf('js', 'intent', wid), data, { msgID: `${wid}.ingress` });
          } catch (e) {
            pending.settle(wid, e as Error);
          }
        }
        await done;
      },
      stop: async () => {
        await conn.drain().catch(() => undefined);
        await Promise.all(workers.map((w) => w.stop()));
        await nats.stop();
      },
    };
  } catch (e) {
    await nc?.close().catch(() => undefined);
    await Promise.all(workers.map((w) => w.stop()));
    await nats.stop();
    throw e;
  }
}
