import { queryOptionsOf } from './chorus.executor';

describe('queryOptionsOf (A2A message metadata)', () => {
  it('queryOptionsOf - a deadline_ms over the deployment limit is refused with that limit alone, as the REST API says it', () => {
    // Over both the deployment's limit (300000) and the widest any deployment may set (an hour).
    expect(queryOptionsOf({ deadline_ms: 1e12 }, 300_000).refusal).toBe('invalid metadata: deadline_ms: deadline_ms must not be greater than 300000');
    expect(queryOptionsOf({ deadline_ms: 400_000 }, 300_000).refusal).toBe('invalid metadata: deadline_ms: deadline_ms must not be greater than 300000');
    expect(queryOptionsOf({ deadline_ms: 50.5, top_k: 'x' }, 300_000).refusal).toBe('invalid metadata: top_k: top_k must be an integer number | deadline_ms: deadline_ms must not be less than 100; deadline_ms must be an integer number');
    expect(queryOptionsOf({ deadline_ms: 2000 }, 300_000)).toEqual({ options: { deadline_ms: 2000 } });
  });
});
