import { Bus, defaultBusOptions } from '@chorus/bus';
import { isTerminalStatus, newMessageId, workflowFilter, type Envelope, type WorkflowStatus } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { flags, rssMiB, snapshotDist } from './bench.support';
import { startChorusSystem, type ChorusSystem } from './chorus.system';
import { PendingWorkflows } from './load';

export interface HubMemoryPoint {
  workflows: number;
  rssMiB: number;
  /** Workflows per second since the first checkpoint's run began. */
  rate: number;
  elapsedS: number;
}

export interface HubMemoryResult {
  warmup: number;
  warmupRssMiB: number;
  points: HubMemoryPoint[];
  /** The largest |RSS / RSS at the first checkpoint − 1| over the checkpoints: "flat" is ≤ 0.2. */
  drift: number;
  failed: number;
  firstError?: string;
  notes: string[];
}

/**
 * How the workflows are made: `pipeline` runs each through the real agents (about 100 workflows/s
 * here, so 200,000 take half an hour or more); `replay` records one real workflow's envelopes, stops
 * the agents, and publishes that chain again under a new correlation id per workflow (new message
 * ids, times and deadline; the same payloads), so the hub does exactly its work on each envelope.
 */
export type HubMemoryDriver = 'pipeline' | 'replay';

const PIPELINE: readonly string[] = ['query', 'classification_result', 'execution_plan', 'tool_results', 'response'];

export async function measureHubMemory(options: {
  checkpoints: number[];
  concurrency: number;
  warmup?: number;
  driver?: HubMemoryDriver;
  onPoint?: (p: HubMemoryPoint) => void;
}): Promise<HubMemoryResult> {
  const checkpoints = [...options.checkpoints].sort((a, b) => a - b);
  const warmup = options.warmup ?? 500;
  const driver = options.driver ?? 'replay';
  const system = await startChorusSystem('hub-apart');
  let replay: Replay | undefined;
  try {
    const hubPid = system.processes().hub!;
    if (driver === 'replay') replay = await startReplay(system);
    const runOne = replay ? replay.run : (i: number) => system.run(i);
    let seq = 0;
    let failed = 0;
    let firstError: string | undefined;
    const runUntil = async (count: number) => {
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (seq < count) {
            const i = seq++;
            await runOne(i).catch((e: Error) => {
              failed++;
              firstError ??= e.message;
            });
          }
        }),
      );
    };
    await runUntil(warmup);
    await new Promise((r) => setTimeout(r, 1000));
    const warmupRssMiB = rssMiB(hubPid);
    const points: HubMemoryPoint[] = [];
    const t0 = Date.now();
    for (const checkpoint of checkpoints) {
      await runUntil(warmup + checkpoint);
      await new Promise((r) => setTimeout(r, 500));
      const elapsedS = (Date.now() - t0) / 1000;
      const point = { workflows: checkpoint, rssMiB: rssMiB(hubPid), rate: checkpoint / elapsedS, elapsedS };
      points.push(point);
      options.onPoint?.(point);
    }
    const first = points[0]?.rssMiB ?? NaN;
    const drift = Math.max(...points.map((p) => Math.abs(p.rssMiB / first - 1)));
    const notes = [`driver: ${driver}${replay ? ' (one real workflow\'s envelopes, re-published per workflow; agents stopped)' : ' (every workflow through the real agents)'}`];
    if (!replay) notes.push(...(await system.notes()));
    return { warmup, warmupRssMiB, points, drift, failed, firstError, notes };
  } finally {
    await replay?.close();
    await system.stop();
  }
}

interface Replay {
  run(seq: number): Promise<void>;
  close(): Promise<void>;
}

/** Records one real workflow's envelopes, stops the agents, and returns a driver that re-publishes them. */
async function startReplay(system: ChorusSystem): Promise<Replay> {
  const sampled = await system.sampleEnvelopes();
  const chain = PIPELINE.map((type) => {
    const found = sampled.find((w) => w.envelope.message_type === type && w.envelope.agent !== 'hub');
    if (!found) throw new Error(`the sample workflow has no ${type} envelope`);
    return found.envelope;
  });
  await system.stopProcess('agents');
  const bus = await Bus.connect({ ...defaultBusOptions(), servers: [system.url], name: 'bench-hub-replay' }, createRootLogger({ name: 'bench', level: 'warn' }));
  const pending = new PendingWorkflows(60_000);
  bus.nc.subscribe(workflowFilter({ messageType: 'status_update' }), {
    callback: (_e, m) => {
      if (m.headers?.get('Chorus-Agent') !== 'hub') return;
      const status = m.json<{ payload: { workflow_status: WorkflowStatus } }>().payload.workflow_status;
      if (!isTerminalStatus(status)) return;
      const correlationId = m.subject.slice(m.subject.lastIndexOf('.') + 1);
      pending.settle(correlationId, status === 'completed' ? null : new Error(`workflow ${correlationId} ${status}`));
    },
  });
  await bus.nc.flush();
  return {
    run: async () => {
      const correlationId = newMessageId();
      const deadline = new Date(Date.now() + 60_000).toISOString();
      let cause: Envelope | undefined;
      const done = pending.wait(correlationId);
      for (const original of chain) {
        const envelope: Envelope = {
          ...original,
          correlation_id: correlationId,
          message_id: newMessageId(),
          causation_id: cause ? cause.message_id : original.causation_id,
          timestamp: new Date().toISOString(),
          deadline,
        };
        await bus.publish(envelope);
        cause = envelope;
      }
      await done;
    },
    close: () => bus.close(),
  };
}

/**
 * `npm run bench:hub`: the hub's RSS at checkpoints. Options: --workflows N (10000),
 * --checkpoints a,b,c (default: N), --concurrency C (64), --driver replay|pipeline (replay).
 */
async function main(): Promise<void> {
  const opts = flags({ workflows: '10000', checkpoints: '', concurrency: '64', driver: 'replay' });
  snapshotDist();
  const total = Number(opts.workflows);
  const checkpoints = (opts.checkpoints || String(total)).split(',').map(Number).filter((n) => n > 0 && n <= total);
  console.log('workflows | hub RSS MiB | workflows/s');
  const result = await measureHubMemory({
    checkpoints,
    concurrency: Number(opts.concurrency),
    driver: opts.driver === 'pipeline' ? 'pipeline' : 'replay',
    onPoint: (p) => console.log(`${String(p.workflows).padStart(9)} | ${p.rssMiB.toFixed(1).padStart(11)} | ${p.rate.toFixed(0).padStart(11)}`),
  });
  console.log(`hub RSS after the ${result.warmup}-workflow warm-up: ${result.warmupRssMiB.toFixed(1)} MiB; largest drift from the first checkpoint: ${(result.drift * 100).toFixed(1)} %`);
  console.log(`failed: ${result.failed}${result.firstError ? ` (first: ${result.firstError})` : ''}`);
  for (const n of result.notes) console.log(n);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
