import { LogThrottle } from './log-throttle';

describe('LogThrottle', () => {
  it('LogThrottle - writes up to its bound per window, then leaves lines out and says how many in the next line written', () => {
    let t = 0;
    const throttle = new LogThrottle(2, 1000, () => t);
    expect([throttle.take(), throttle.take(), throttle.take(), throttle.take()].map((r) => r.write)).toEqual([true, true, false, false]);
    t = 1000;
    expect(throttle.take()).toEqual({ write: true, suppressed: 2 });
    expect(throttle.take()).toEqual({ write: true, suppressed: 0 });
    expect(throttle.take().write).toBe(false);
  });
});
