import { createScope } from './scope.js';

/**
 * Samples `GET /v1/stats` every `intervalMs` for the whole session, whatever page is open, so the
 * throughput chart has history when you reach it. Keeps the last `keep` samples (a ring, so memory
 * stays flat however long the tab stays open). Pauses while the tab is hidden.
 */
export function createStatsSampler(api, { intervalMs = 2000, keep = 180 } = {}) {
  const samples = [];
  const listeners = new Set();
  const scope = createScope();
  let latest = null;
  let error = null;

  const notify = () => {
    for (const fn of listeners) fn();
  };
  const poller = scope.poll(
    async (signal) => {
      const stats = await api.get('/v1/stats', { signal });
      latest = stats;
      error = null;
      samples.push({ t: Date.now(), totals: stats.totals });
      if (samples.length > keep) samples.splice(0, samples.length - keep);
      notify();
    },
    intervalMs,
    {
      onError: (err) => {
        error = err;
        notify();
      },
    },
  );

  return {
    intervalMs,
    get samples() {
      return samples;
    },
    get latest() {
      return latest;
    },
    get error() {
      return error;
    },
    refresh: () => poller.now(),
    /** Calls `fn` after every sample; unsubscribes when `pageScope` is disposed. */
    subscribe(fn, pageScope) {
      listeners.add(fn);
      pageScope.onDispose(() => listeners.delete(fn));
      if (latest || error) fn();
    },
  };
}

/**
 * Per-second rates of the given totals keys, each over the last `span` samples (about six seconds:
 * a two-second rate of a few workflows is mostly noise). A gap longer than three intervals (a hidden
 * tab) breaks the line instead of drawing a misleading average across it.
 */
export function ratesOf(samples, keys, intervalMs, span = 3) {
  const out = [];
  let from = 0; // first sample after the last gap
  for (let i = 1; i < samples.length; i++) {
    if (samples[i].t - samples[i - 1].t > intervalMs * 3) {
      out.push({ t: samples[i].t, v: null });
      from = i;
      continue;
    }
    const a = samples[Math.max(from, i - span)];
    const b = samples[i];
    const dt = (b.t - a.t) / 1000;
    if (dt <= 0) continue;
    const delta = keys.reduce((sum, k) => sum + Math.max(0, (b.totals[k] ?? 0) - (a.totals[k] ?? 0)), 0);
    out.push({ t: b.t, v: delta / dt });
  }
  return out;
}
