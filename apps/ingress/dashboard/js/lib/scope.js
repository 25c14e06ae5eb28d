/**
 * Everything a page starts (polls, timers, streams, observers, fetches) belongs to its scope, and
 * the router disposes the scope on navigation: nothing keeps running behind a page you left.
 * `live` counts what is running so the browser test can check that nothing leaks.
 */
export const live = { scopes: 0, timers: 0, streams: 0 };

export function createScope() {
  const controller = new AbortController();
  const disposers = [];
  live.scopes++;
  const scope = {
    signal: controller.signal,
    get disposed() {
      return controller.signal.aborted;
    },
    onDispose(fn) {
      if (controller.signal.aborted) fn();
      else disposers.push(fn);
    },
    /** setTimeout that dies with the scope. */
    timeout(fn, ms) {
      let done = false;
      const settle = () => {
        if (done) return false;
        done = true;
        live.timers--;
        const i = disposers.indexOf(cancel);
        if (i >= 0) disposers.splice(i, 1);
        return true;
      };
      const cancel = () => {
        if (settle()) clearTimeout(t);
      };
      live.timers++;
      const t = setTimeout(() => {
        if (settle()) fn();
      }, ms);
      disposers.push(cancel);
      return cancel;
    },
    /** Runs `fn` now and every `ms` after it settles; see createPoller. */
    poll(fn, ms, options) {
      const poller = createPoller(scope, fn, ms, options);
      poller.start();
      return poller;
    },
    /** A stream counted in `live.streams` until it ends or the scope is disposed. */
    trackStream() {
      live.streams++;
      let done = false;
      const end = () => {
        if (!done) {
          done = true;
          live.streams--;
        }
      };
      disposers.push(end);
      return end;
    },
    /** Calls `fn(width)` when `el`'s width changes, and once when first observed. */
    onResize(el, fn) {
      let last = null;
      const ro = new ResizeObserver(([entry]) => {
        const width = Math.floor(entry.contentRect.width);
        if (width !== last) {
          last = width;
          fn(width);
        }
      });
      ro.observe(el);
      disposers.push(() => ro.disconnect());
    },
    dispose() {
      if (controller.signal.aborted) return;
      controller.abort();
      live.scopes--;
      for (const fn of disposers.splice(0).reverse()) fn();
    },
  };
  return scope;
}

/**
 * A poll that never overlaps itself: the next run is scheduled only after the previous one settled,
 * so a slow server gets fewer requests, not a queue of them. It sleeps while the tab is hidden, backs
 * off on errors (up to 30 s), and `now()` runs it at once (after the one in flight, if any).
 */
function createPoller(scope, fn, ms, { onError, pauseWhenHidden = true } = {}) {
  let cancelTimer = null;
  let running = false;
  let again = false;
  let failures = 0;
  let stopped = false;

  const schedule = (delay) => {
    cancelTimer?.();
    cancelTimer = stopped || scope.disposed ? null : scope.timeout(run, delay);
  };
  async function run() {
    cancelTimer = null;
    if (stopped || scope.disposed) return;
    if (pauseWhenHidden && document.hidden) return; // resumed by visibilitychange
    running = true;
    try {
      await fn(scope.signal);
      failures = 0;
    } catch (err) {
      if (scope.disposed || err?.name === 'AbortError') return;
      failures++;
      onError?.(err);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      return run();
    }
    // The first retry comes at the usual pace (one blip costs nothing), then 2×, 4×… up to 30 s.
    schedule(failures ? Math.min(30_000, ms * 2 ** (failures - 1)) : ms);
  }
  const onVisible = () => {
    if (!document.hidden && !running && !cancelTimer) run();
  };
  document.addEventListener('visibilitychange', onVisible);
  scope.onDispose(() => document.removeEventListener('visibilitychange', onVisible));

  return {
    start: () => run(),
    now() {
      if (running) again = true;
      else {
        cancelTimer?.();
        run();
      }
    },
    stop() {
      stopped = true;
      cancelTimer?.();
      cancelTimer = null;
    },
    resume() {
      if (!stopped) return;
      stopped = false;
      run();
    },
    get stopped() {
      return stopped;
    },
  };
}
