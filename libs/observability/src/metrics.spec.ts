import { Metrics } from './metrics';

describe('Metrics', () => {
  it('Metrics.gauge - read at scrape time: absent until a first read succeeds, then its last value; each failed read counted in the scrape it failed in', async () => {
    const metrics = new Metrics('test');
    let total: number | null = null;
    metrics.gauge('chorus_test_total', 'a total read elsewhere', [], async (set) => {
      if (total === null) throw new Error('the hub is not answering');
      set({}, total);
    });
    const line = (text: string, name: string) => text.split('\n').find((l) => l.startsWith(`${name}{`))?.replace(/\{[^}]*\}/, '') ?? null;

    let text = await metrics.text();
    expect({ value: line(text, 'chorus_test_total'), failures: line(text, 'chorus_metrics_collect_failures_total') }).toEqual({ value: null, failures: 'chorus_metrics_collect_failures_total 1' });
    total = 12;
    text = await metrics.text();
    expect(line(text, 'chorus_test_total')).toBe('chorus_test_total 12');
    const readAt = Number(line(text, 'chorus_metrics_last_read_timestamp_seconds')?.split(' ')[1]);
    expect(Math.abs(readAt - Date.now() / 1000)).toBeLessThan(5);
    total = null;
    await new Promise((r) => setTimeout(r, 20));
    text = await metrics.text();
    expect({ value: line(text, 'chorus_test_total'), failures: line(text, 'chorus_metrics_collect_failures_total') }).toEqual({ value: 'chorus_test_total 12', failures: 'chorus_metrics_collect_failures_total 2' });
    // A kept value says how old it is.
    expect(Number(line(text, 'chorus_metrics_last_read_timestamp_seconds')?.split(' ')[1])).toBe(readAt);
  });
});
