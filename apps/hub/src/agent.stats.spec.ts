import { AgentStats } from './agent.stats';

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
});
