/** The longest delay setTimeout honours: 2^31-1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `fn` at the time `at` (ms since the epoch), however far away: setTimeout fires at once
 * (with a TimeoutOverflowWarning) for a delay past MAX_TIMER_MS, and a deadline or a workflow can
 * be months away, so a long wait is taken in steps. Returns the cancel.
 */
export function setTimerAt(at: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const arm = () => {
    if (cancelled) return;
    const left = at - Date.now();
    timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fn, Math.max(0, left));
  };
  arm();
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}
