import { AgentStats, TenantAgentStats } from './agent.stats';

describe('AgentStats', () => {
  it('AgentStats - count, error rate and percentiles within about 6%', () => {
    const stats = new AgentStats(60_000, 6);
    const now = 1_000_000;
    for (let i = 1; i <= 100; i++) stats.record('search', i, i % 10 === 0, now);
    const [s] = stats.snapshot(now);
    expect(s).toEqual(expect.objectContaining({ agent: 'search', count: 100, errors: 10, error_rate: 0.1 }));
    expect(s.p50_ms!).toBeGreaterThanOrEqual(50);
    expect(s.p50_ms!).toBeLessThanOrEqual(53);
    expect(s.p99_ms!).toBeGreaterThanOrEqual(99);
    expect(s.p99_ms!).toBeLessThanOrEqual(105);
  });

  it('AgentStats - forgets what slid out of the window', () => {
    const stats = new AgentStats(60_000, 6);
    stats.record('intent', 5, false, 0);
    stats.record('intent', 7, true, 30_000);
    expect(stats.snapshot(30_000)[0].count).toBe(2);
    const later = stats.snapshot(75_000)[0];
    expect(later.count).toBe(1);
    expect(later.errors).toBe(1);
    expect(stats.snapshot(200_000)[0]).toEqual(expect.objectContaining({ count: 0, p50_ms: null }));
  });

  it('TenantAgentStats - each tenant sees its own steps only; the least recently active tenant is forgotten past the bound', () => {
    const stats = new TenantAgentStats(60_000, 6, 2);
    stats.record('acme', 'intent', 5, false, 0);
    stats.record('acme', 'intent', 7, true, 0);
    stats.record('globex', 'search', 9, false, 0);
    expect(stats.snapshot('acme', 0).map((a) => [a.agent, a.count, a.errors])).toEqual([['intent', 2, 1]]);
    expect(stats.snapshot('globex', 0).map((a) => [a.agent, a.count])).toEqual([['search', 1]]);
    expect(stats.snapshot('initech', 0)).toEqual([]);
    stats.record('acme', 'search', 3, false, 0); // acme is now the most recent; globex is pushed out
    stats.record('initech', 'planner', 1, false, 0);
    expect(stats.snapshot('globex', 0)).toEqual([]);
    expect(stats.snapshot('acme', 0).map((a) => a.agent)).toEqual(['intent', 'search']);
    expect(stats.snapshot('initech', 0).map((a) => a.count)).toEqual([1]);
  });
});
