import fc from 'fast-check';
import { DeadlineQueue } from './deadline.queue';

describe('DeadlineQueue', () => {
  it('DeadlineQueue - pops the keys that are due, earliest first, once', () => {
    const q = new DeadlineQueue();
    q.schedule('b', 200);
    q.schedule('a', 100);
    q.schedule('c', 300);
    expect(q.popDue(250)).toEqual(['a', 'b']);
    expect(q.popDue(250)).toEqual([]);
    expect(q.size).toBe(1);
  });

  it('DeadlineQueue - refuses a deadline that is not a time, logs it, and keeps every other deadline coming due', () => {
    const warnings: unknown[] = [];
    const q = new DeadlineQueue({ warn: (obj: unknown) => void warnings.push(obj) } as never);
    expect(q.schedule('bystander', 1500)).toBe(true);
    for (const bad of [Date.parse('20261130T103010Z'), Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(q.schedule('odd', bad)).toBe(false);
    }
    expect(warnings).toHaveLength(4);
    expect(q.size).toBe(1);
    expect(q.popDue(2000)).toEqual(['bystander']);
  });

  it('DeadlineQueue - any mix of deadlines, moves and refused times pops every due key in order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constant(Number.NaN)))), (ops) => {
        const q = new DeadlineQueue();
        const latest = new Map<string, number>();
        for (const [k, at] of ops) if (q.schedule(`k${k}`, at)) latest.set(`k${k}`, at);
        const due = q.popDue(500);
        const expected = [...latest].filter(([, at]) => at <= 500).sort((a, b) => a[1] - b[1]);
        expect(new Set(due)).toEqual(new Set(expected.map(([k]) => k)));
        expect(due.map((k) => latest.get(k))).toEqual(expected.map(([, at]) => at));
      }),
    );
  });
});
