import { Bus, ChorusClient, defaultBusOptions } from '@chorus/bus';
import { isTerminalStatus, workflowFilter, type Envelope, type WorkflowStatus, type WorkflowView } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';

/** One row of the chaos table. */
export interface ChaosResult {
  scenario: string;
  sent: number;
  completed: number;
  degraded: number;
  failed: number;
  timed_out: number;
  /** Workflows with no terminal state the hub can report once everything settled. */
  lost: number;
  /** Workflows with more than one response or terminal update (distinct envelopes), or a repeated step. */
  duplicate_effects: number;
  /** Workflows in more than one terminal state, or none. */
  not_exactly_one_terminal: number;
  p50_ms: number | null;
  p99_ms: number | null;
  notes: string;
}

const QUERIES = [
  'how does chorus drop duplicates',
  'what does the correlation hub keep',
  'reciprocal rank fusion k=60',
  'dead letter subject for invalid envelopes',
  'how do I run the tests',
  'what happens when a profile hangs',
];

/**
 * Drives workflows into a running Chorus over the bus and checks, afterwards, what became of each:
 * submits with an idempotency key per workflow (so a retried submit during an outage cannot start a
 * second workflow), times each to its terminal update, then asks the hub for every workflow and
 * reads its history.
 */
export class ChaosDriver {
  private readonly finishedAt = new Map<string, number>();
  /** Histories that could not be read back at all (why, per workflow). */
  private readonly historyErrors: string[] = [];

  private constructor(
    readonly bus: Bus,
    readonly client: ChorusClient,
    private readonly runId: string,
  ) {}

  static async connect(urls: string[], credentials?: { user: string; pass: string }): Promise<ChaosDriver> {
    const log = createRootLogger({ name: 'chaos', level: 'silent' });
    const bus = await Bus.connect({ ...defaultBusOptions(), servers: urls, name: 'chaos-driver', ...credentials, requestTimeoutMs: 3000 }, log);
    const client = new ChorusClient(bus, {
      agent: 'chaos',
      correlation: { strategy: 'uuidv7', secret: 'chaos' },
      defaultDeadlineMs: 20_000,
      defaultTopK: 5,
      requestTimeoutMs: 3000,
      terminalGraceMs: 2000,
    });
    const driver = new ChaosDriver(bus, client, Math.random().toString(36).slice(2, 8));
    bus.nc.subscribe(workflowFilter({ messageType: 'status_update' }), {
      callback: (_e, m) => {
        if (m.headers?.get('Chorus-Agent') !== 'hub') return;
        const cid = m.headers.get('Chorus-Correlation-Id');
        if (cid && !driver.finishedAt.has(cid)) driver.finishedAt.set(cid, Date.now());
      },
    });
    return driver;
  }

  /** Submits `count` workflows, `concurrency` at a time; calls `onProgress` after each submit. */
  async submit(count: number, options: { concurrency: number; deadlineMs: number; onProgress?: (submitted: number) => Promise<void> | void }) {
    const submittedAt = new Map<string, number>();
    let next = 0;
    let submitted = 0;
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < count) {
          const i = next++;
          const key = `chaos-${this.runId}-${i}`;
          const started = Date.now();
          const id = await this.retry(() =>
            this.client.submit({ query: `${QUERIES[i % QUERIES.length]} (${i})`, tenant_id: 'default', deadline_ms: options.deadlineMs }, { idempotencyKey: key }),
          );
          submittedAt.set(id.correlation_id, started);
          submitted += 1;
          await options.onProgress?.(submitted);
        }
      }),
    );
    return submittedAt;
  }

  /** Waits until the hub reports every workflow finished, or `timeoutMs`; then judges each. */
  async verify(scenario: string, submittedAt: Map<string, number>, timeoutMs: number, notes = ''): Promise<ChaosResult> {
    const ids = [...submittedAt.keys()];
    const deadline = Date.now() + timeoutMs;
    let views = new Map<string, WorkflowView | null>();
    while (Date.now() < deadline) {
      views = await this.views(ids);
      if ([...views.values()].every((v) => v && isTerminalStatus(v.status))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const count = (s: WorkflowStatus) => [...views.values()].filter((v) => v?.status === s).length;
    const histories = await this.histories(ids);
    let duplicateEffects = 0;
    let notOne = 0;
    for (const id of ids) {
      const envelopes = histories.get(id) ?? [];
      const distinct = (pick: (e: Envelope) => boolean) => new Set(envelopes.filter(pick).map((e) => e.message_id)).size;
      const responses = distinct((e) => e.message_type === 'response');
      const terminals = distinct((e) => e.message_type === 'status_update' && e.agent === 'hub');
      const steps = views.get(id)?.steps.map((s) => s.step) ?? [];
      if (responses > 1 || terminals > 1 || new Set(steps).size !== steps.length) {
        duplicateEffects += 1;
        if (process.env.CHAOS_DEBUG && duplicateEffects === 1) {
          console.error(JSON.stringify({ id, responses, terminals, steps, history: envelopes.map((e) => `${e.message_type}:${e.agent}:${e.message_id.slice(-6)}`) }, null, 1));
        }
      }
      if (terminals !== 1) {
        notOne += 1;
        if (process.env.CHAOS_DEBUG && notOne === 1) {
          console.error(JSON.stringify({ id, terminals, status: views.get(id)?.status, history: envelopes.map((e) => `${e.message_type}:${e.agent}:${e.message_id.slice(-6)}:${(e.payload as { workflow_status?: string }).workflow_status ?? ''}`) }, null, 1));
        }
      }
    }
    if (process.env.CHAOS_DEBUG) {
      const failed = ids.map((id) => views.get(id)).filter((v) => v && v.status !== 'completed').slice(0, 3);
      for (const v of failed) console.error(JSON.stringify({ status: v!.status, errors: v!.errors, history: (histories.get(v!.correlation_id) ?? []).map((e) => `${e.message_type}:${e.agent}:${e.status}:${e.message_id.slice(-6)}:${(e.payload as { workflow_status?: string }).workflow_status ?? ''}`) }, null, 1));
    }
    const latencies = ids
      .filter((id) => views.get(id)?.status === 'completed' && this.finishedAt.has(id))
      .map((id) => this.finishedAt.get(id)! - submittedAt.get(id)!)
      .sort((a, b) => a - b);
    const pct = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] : null);
    return {
      scenario,
      sent: ids.length,
      completed: count('completed'),
      degraded: [...views.values()].filter((v) => v?.status === 'completed' && v.degraded).length,
      failed: count('failed'),
      timed_out: count('timed_out'),
      lost: ids.filter((id) => !views.get(id) || !isTerminalStatus(views.get(id)!.status)).length,
      duplicate_effects: duplicateEffects,
      not_exactly_one_terminal: notOne,
      p50_ms: pct(0.5),
      p99_ms: pct(0.99),
      notes: this.historyErrors.length ? `${notes}; history unreadable for ${this.historyErrors.length} (first: ${this.historyErrors[0]})` : notes,
    };
  }

  async close(): Promise<void> {
    await this.bus.close();
  }

  private async views(ids: string[]): Promise<Map<string, WorkflowView | null>> {
    const out = new Map<string, WorkflowView | null>();
    await inBatches(ids, 16, async (id) => out.set(id, await this.client.workflow(id, 'default').catch(() => null)));
    return out;
  }

  private async histories(ids: string[]): Promise<Map<string, Envelope[]>> {
    const out = new Map<string, Envelope[]>();
    await inBatches(ids, 8, async (id) => {
      // Patient: right after a failure (a cluster re-electing the leaders of its consumers) a read
      // can fail for seconds. One that never succeeds shows as a workflow without one terminal update.
      const h = await this.retry(() => this.client.history(id, 'default'), 40).catch((e: Error) => {
        this.historyErrors.push(`${id}: ${e.message}`);
        return null;
      });
      out.set(id, (h?.envelopes ?? []) as Envelope[]);
    });
    return out;
  }

  /** Retries an operation that fails while NATS or the hub is away. */
  private async retry<T>(op: () => Promise<T>, attempts = 120): Promise<T> {
    let last: unknown;
    for (let i = 0; i < attempts; i++) {
      try {
        return await op();
      } catch (e) {
        last = e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    throw last;
  }
}

async function inBatches<T>(items: T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) await each(items[next++]);
    }),
  );
}
