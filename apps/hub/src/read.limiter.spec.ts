import { HubBusyError } from './hub.errors';
import { ReadLimiter } from './read.limiter';

describe('ReadLimiter', () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it('ReadLimiter - runs up to its concurrency, queues up to its bound in order, refuses beyond, and frees every turn', async () => {
    const limiter = new ReadLimiter(2, 1, 'history reads');
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const reads = gates.map((g, i) =>
      limiter.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(limiter.load).toEqual({ running: 2, waiting: 1 });
    await expect(limiter.run(async () => 'late')).rejects.toThrow(HubBusyError);
    await expect(limiter.run(async () => 'late')).rejects.toThrow('the hub is busy: 2 history reads are under way and 1 more wait; try again shortly');
    gates[1].resolve();
    expect(await reads[1]).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[0].resolve();
    gates[2].resolve();
    expect(await Promise.all(reads)).toEqual([0, 1, 2]);
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });

  it('ReadLimiter - a read that waited past its caller\'s patience for its turn is refused then, not run, and the next one runs', async () => {
    const limiter = new ReadLimiter(1, 2, 'reads');
    let release!: () => void;
    const first = limiter.run(() => new Promise<string>((r) => (release = () => r('first'))));
    let ran = false;
    const stale = limiter.run(async () => ((ran = true), 'stale'), 20);
    const patient = limiter.run(async () => 'patient', 60_000);
    await new Promise((r) => setTimeout(r, 40));
    release();
    expect(await first).toBe('first');
    await expect(stale).rejects.toThrow('the hub is busy: this read waited more than 20 ms for its turn; try again shortly');
    expect(ran).toBe(false);
    expect(await patient).toBe('patient');
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });

  it('ReadLimiter - a read that throws gives its turn back', async () => {
    const limiter = new ReadLimiter(1, 0, 'reads');
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(async () => 'next')).toBe('next');
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });
});
