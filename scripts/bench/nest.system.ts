import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientNats, ClientProxy, ClientsModule, EventPattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { spawnHopWorker, startBenchNats, type ChildApp } from './bench.support';
import { PendingWorkflows } from './load';
import type { SystemId, SystemUnderTest } from './system.types';
import { createRequest, nextHop, type AgentHop, type BenchMessage, type HopStep, type HopWork } from './workload';

/**
 * The stock alternative: the same choreography on NestJS's built-in NATS transport. Each hop is an
 * `@EventPattern` handler; it forwards with `ClientProxy.emit` (Nest serializes `{pattern, data}`
 * as JSON). Core NATS underneath: at-most-once, nothing stored, no dedup, no ledger.
 */
const NEXT = 'BENCH_NEXT_HOP';
const STEP = 'BENCH_HOP_STEP';
type HopEvents = Record<'nest.intent' | 'nest.planner' | 'nest.search' | 'nest.responder', BenchMessage>;

@Controller()
class NestHopsController {
  constructor(
    @Inject(NEXT) private readonly next: ClientProxy,
    @Inject(STEP) private readonly applyHop: HopStep,
  ) {}

  @EventPattern<HopEvents>('nest.intent')
  intent(@Payload() m: BenchMessage): void {
    this.forward(m, 'intent');
  }

  @EventPattern<HopEvents>('nest.planner')
  planner(@Payload() m: BenchMessage): void {
    this.forward(m, 'planner');
  }

  @EventPattern<HopEvents>('nest.search')
  search(@Payload() m: BenchMessage): void {
    this.forward(m, 'search');
  }

  @EventPattern<HopEvents>('nest.responder')
  responder(@Payload() m: BenchMessage): void {
    this.forward(m, 'responder');
  }

  private forward(m: BenchMessage, hop: AgentHop): void {
    // emit() is hot: the publish happens now, whether or not anyone subscribes to the result.
    this.next.emit(`nest.${nextHop(hop)}`, this.applyHop(m, hop));
  }
}

@Module({})
class NestHopsModule {
  static forServer(url: string, step: HopStep): DynamicModule {
    return {
      module: NestHopsModule,
      imports: [ClientsModule.register([{ name: NEXT, transport: Transport.NATS, options: { servers: [url], name: 'nest-hops-client' } }])],
      controllers: [NestHopsController],
      providers: [{ provide: STEP, useValue: step }],
    };
  }
}

/** The hop side (runs in hop-worker): one Nest microservice with the four handlers. */
export async function startNestHops(url: string, step: HopStep): Promise<() => Promise<void>> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(NestHopsModule.forServer(url, step), {
    transport: Transport.NATS,
    options: { servers: [url], name: 'nest-hops' },
    logger: ['error', 'warn'],
  });
  await app.listen();
  await app.get<ClientProxy>(NEXT).connect();
  return () => app.close();
}

export async function startNestSystem(id: SystemId = 'nest', work: HopWork = 'trivial'): Promise<SystemUnderTest> {
  const nats = await startBenchNats();
  let worker: ChildApp | undefined;
  let nc: NatsConnection | undefined;
  let client: ClientNats | undefined;
  try {
    worker = spawnHopWorker(['nest', 'intent,planner,search,responder', work], { NATS_URL: nats.url }, 'nest hops');
    await worker.waitFor(/hops ready/);
    // The ingress is a Nest client too; completions are read with the raw client (one parse).
    client = new ClientNats({ servers: [nats.url], name: 'bench-nest-ingress' });
    await client.connect();
    nc = await connect({ servers: [nats.url], name: 'bench-nest-done', noAsyncTraces: true });
    const pending = new PendingWorkflows(30_000);
    nc.subscribe('nest.done', { callback: (_e, msg) => pending.settle(msg.json<{ data: BenchMessage }>().data.id) });
    await nc.flush();
    const tag = Date.now().toString(36);
    let next = 0; // ids stay unique across load levels (the JetStream floor deduplicates on them)
    const [w, conn, ingress] = [worker, nc, client];
    return {
      id,
      url: nats.url,
      monitorUrl: nats.monitorUrl,
      processes: () => ({ 'nats-server': nats.pid, hops: w.child.pid }),
      notes: async () => [],
      run: async (seq) => {
        const id = `${tag}-${next++}`;
        const done = pending.wait(id);
        ingress.emit('nest.intent', createRequest(id, seq));
        await done;
      },
      stop: async () => {
        await ingress.close();
        await conn.drain().catch(() => undefined);
        await w.stop();
        await nats.stop();
      },
    };
  } catch (e) {
    await client?.close().catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await worker?.stop();
    await nats.stop();
    throw e;
  }
}
