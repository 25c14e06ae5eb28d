import { join } from 'node:path';
import { startBenchNats, type BenchNats } from '../scripts/bench/bench.support';
import { hopLatencies } from '../scripts/bench/chorus.system';
import { runClosedLoop, PendingWorkflows } from '../scripts/bench/load';
import { CpuMeter, parseMachineBusyTicks, parseProcStat, percentile, summarizeLatencies } from '../scripts/bench/measure';
import { toLevelResult } from '../scripts/bench/results';
import { subjectKind } from '../scripts/bench/traffic';
import { createAppWork } from '../scripts/bench/app-work';
import { AGENT_HOPS, applyHop, createRequest, nextHop } from '../scripts/bench/workload';

describe('benchmark harness', () => {
  it('percentile - nearest rank: never interpolates, p0 and p100 are the extremes', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile([3, 7], 50)).toBe(3);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizeLatencies - sorts numerically and reports count, mean and percentiles', () => {
    const s = summarizeLatencies([10, 2, 1, 100, 3]);
    expect(s).toMatchObject({ count: 5, p50: 3, p90: 100, p99: 100, max: 100 });
    expect(s.mean).toBeCloseTo(23.2);
  });

  it('parseProcStat - reads utime and stime after a command name holding spaces and parentheses', () => {
    const line = '1234 (node (my) app) S 1 1234 1234 0 -1 4194560 100 0 0 0 750 125 0 0 20 0 11 0 5000 1000 200';
    expect(parseProcStat(line)).toEqual({ utime: 750, stime: 125 });
  });

  it('parseMachineBusyTicks - counts everything but idle and iowait', () => {
    expect(parseMachineBusyTicks('cpu  100 5 50 1000 40 3 2 1 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n')).toBe(100 + 5 + 50 + 3 + 2 + 1);
  });

  it('CpuMeter - sees this process burn the CPU it burnt', () => {
    const meter = new CpuMeter(() => ({ self: process.pid }));
    const before = meter.snapshot().self;
    // Burn 0.3 s of CPU, not of wall time: on a busy machine the process waits for a core.
    const start = process.cpuUsage();
    let x = 0;
    while (process.cpuUsage(start).user < 300_000) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    const spent = meter.snapshot().self - before;
    expect(x).toBeGreaterThan(0);
    // /proc counts in clock ticks (10 ms): a tick or two either side.
    expect(spent).toBeGreaterThan(0.27);
    expect(spent).toBeLessThan(1.5);
  });

  it('subjectKind - collapses per-message tokens and keeps the kind', () => {
    expect(subjectKind('chorus.wf.default.query.0190b6f2-7c3a-7d41-9a5e-2f3c4d5e6f70')).toBe('chorus.wf.default.query.*');
    expect(subjectKind('$JS.ACK.CHORUS_WF.intent_query.1.42.42.1732960000000000000.0')).toBe('$JS.ACK.CHORUS_WF.intent_query.>');
    expect(subjectKind('_INBOX.ABCDEF123456.abc')).toBe('_INBOX.>');
    expect(subjectKind('chorus.profile.bm25.search')).toBe('chorus.profile.bm25.search');
  });

  it('hopLatencies - pairs consecutive envelopes in arrival order, up to the terminal status the client saw; rare pairs are dropped', () => {
    const run = (offset: number, extra: Array<[string, number]> = []): Array<[string, number]> => [
      ['b:query', offset + 1],
      ['driver:submit', offset],
      ['c:plan', offset + 3],
      ...extra,
      ['driver:terminal seen', offset + 6],
      ['hub:status_update/completed', offset + 5],
      ['hub:status_update/late', offset + 9],
    ];
    const hops = hopLatencies([run(0), run(100), run(200, [['x:rare', 204]])], 3);
    expect(hops.map((h) => `${h.from}>${h.to} ${h.p50Ms} ${h.samples}`)).toEqual([
      'driver:submit>b:query 1 3',
      'b:query>c:plan 2 3',
      'c:plan>hub:status_update/completed 2 2',
      'hub:status_update/completed>driver:terminal seen 1 3',
    ]);
  });

  it('workload - a baseline hop appends its step and its field, and the chain ends in done', () => {
    const m = createRequest('w-1', 1);
    for (const hop of AGENT_HOPS) applyHop(m, hop);
    expect(m.steps.map((s) => s.agent)).toEqual(['ingress', ...AGENT_HOPS]);
    expect(m.results).toHaveLength(10);
    expect(nextHop('responder')).toBe('done');
  });

  it("workload - a same-work hop chain does Chorus's work: a plan of the default profiles, and an answer citing the corpus documents it found", () => {
    const step = createAppWork(join(__dirname, '..'));
    const m = createRequest('w-2', 3);
    for (const hop of AGENT_HOPS) step(m, hop);
    expect(m.steps.map((s) => s.agent)).toEqual(['ingress', ...AGENT_HOPS]);
    expect(m.plan).toMatchObject({ route: 'COMPLEX', profiles: expect.arrayContaining([expect.objectContaining({ name: 'bm25' })]) });
    const answer = m.answer as { answer: string; results: Array<{ id: string; snippet: string }>; sources: unknown[] };
    expect(answer.results).toHaveLength(10);
    expect(answer.results[0].id).toMatch(/^(README|docs\/[a-z-]+)\.md#/);
    expect(answer.answer).toMatch(/\[1\]/);
    expect(answer.sources.length).toBeGreaterThan(0);
  });

  it('PendingWorkflows - a completion that arrives before its waiter still resolves it', async () => {
    const pending = new PendingWorkflows(1000);
    pending.settle('early');
    await expect(pending.wait('early')).resolves.toBeUndefined();
    const late = pending.wait('late');
    pending.settle('late', new Error('failed'));
    await expect(late).rejects.toThrow('failed');
  });

  describe('runClosedLoop against a real nats-server', () => {
    let nats: BenchNats;
    beforeAll(async () => {
      nats = await startBenchNats();
    });
    afterAll(async () => {
      await nats?.stop();
    });

    it('runClosedLoop - throughput and latency of a 10 ms workflow at concurrency 4, CPU and wire counters read', async () => {
      const driver = { run: () => new Promise<void>((r) => setTimeout(r, 10)) };
      const cpu = new CpuMeter(() => ({ 'nats-server': nats.pid, driver: process.pid }));
      const raw = await runClosedLoop(driver, { concurrency: 4, warmupMs: 100, maxWarmupMs: 1000, durationMs: 500, minSamples: 20, maxDurationMs: 2000 }, { cpu, monitorUrl: nats.monitorUrl });
      const r = toLevelResult(raw);
      expect(r.steady).toBe(true);
      expect(r.failed).toBe(0);
      expect(r.latency.p50).toBeGreaterThanOrEqual(9.5);
      expect(r.latency.p50).toBeLessThan(40);
      // 4 in flight, ~10 ms each: about 400 per second (timers on a busy machine run late, never early).
      expect(r.throughput).toBeGreaterThan(80);
      expect(r.throughput).toBeLessThanOrEqual(420);
      expect(Object.keys(r.cpu).sort()).toEqual(['driver', 'nats-server']);
      expect(r.wire.inBytes).toBeGreaterThanOrEqual(0);
      expect(r.cpuPerThousand).toBeGreaterThanOrEqual(r.cpuPerThousandWithoutDriver);
    });
  });
});
