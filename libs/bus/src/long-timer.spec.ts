import { MAX_TIMER_MS, setTimerAt } from './long-timer';

describe('setTimerAt', () => {
  afterEach(() => jest.useRealTimers());

  it('setTimerAt - waits for a time past the 24.8-day setTimeout limit instead of firing at once', () => {
    jest.useFakeTimers({ now: 0 });
    const fired = jest.fn();
    setTimerAt(MAX_TIMER_MS * 2 + 1000, fired);
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('setTimerAt - fires at once for a time already past, never after a cancel', () => {
    jest.useFakeTimers({ now: 10_000 });
    const past = jest.fn();
    setTimerAt(0, past);
    jest.advanceTimersByTime(0);
    expect(past).toHaveBeenCalledTimes(1);
    const cancelled = jest.fn();
    const cancel = setTimerAt(MAX_TIMER_MS * 3, cancelled);
    jest.advanceTimersByTime(MAX_TIMER_MS);
    cancel();
    jest.advanceTimersByTime(MAX_TIMER_MS * 3);
    expect(cancelled).not.toHaveBeenCalled();
  });
});
