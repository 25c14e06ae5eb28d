import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds, from a millisecond to ten seconds: a hop's and a profile request's durations. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** How long a scrape waits for a metric read at scrape time. */
const DEFAULT_COLLECT_TIMEOUT_MS = 2000;

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not read within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The Prometheus metrics of one process. Every app records what it does (envelopes handled, step
 * durations, dead letters, duplicates); the hub adds the workflow totals, which are exact because
 * they come from its counted ledger events.
 */
export class Metrics {
  readonly registry = new Registry();

  /** Envelopes a consumer finished with: ok, retry, failed (given up), invalid, skipped. */
  readonly envelopes = new Counter({
    name: 'chorus_envelopes_total',
    help: 'Envelopes handled by agents of this process, by agent, message type and outcome',
    labelNames: ['agent', 'message_type', 'outcome'] as const,
    registers: [this.registry],
  });

  /** How long handlers took, per agent and message type. */
  readonly stepDuration = new Histogram({
    name: 'chorus_step_duration_seconds',
    help: 'Handler duration per agent and message type',
    labelNames: ['agent', 'message_type'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly deadLetters = new Counter({
    name: 'chorus_dead_letters_published_total',
    help: 'Dead letters this process published, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly duplicatesReported = new Counter({
    name: 'chorus_duplicates_reported_total',
    help: 'Publishes of this process that the workflow stream dropped as duplicates',
    registers: [this.registry],
  });

  /** Lenses a search result went without (the search worker's `degraded` entries). */
  readonly lensesMissing = new Counter({
    name: 'chorus_search_degraded_total',
    help: 'Planned search profiles missing from a result (tool_results.degraded), by profile and reason: timeout, error, unavailable',
    labelNames: ['profile', 'reason'] as const,
    registers: [this.registry],
  });

  /** The search worker's requests to each profile, as it sees them (the network and the profile's queue included). */
  readonly profileRequests = new Histogram({
    name: 'chorus_search_profile_request_duration_seconds',
    help: 'Search requests of the search worker to each profile, from sending to settling, by profile and outcome: ok, timeout, error, unavailable',
    labelNames: ['profile', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  constructor(app: string) {
    this.registry.setDefaultLabels({ app });
    collectDefaultMetrics({ register: this.registry });
  }

  /** The reads of the gauges read at scrape time. */
  private readonly scrapeReads: Array<() => Promise<void>> = [];

  readonly collectFailures = new Counter({
    name: 'chorus_metrics_collect_failures_total',
    help: 'Scrapes that could not read a metric read at scrape time (its source, such as the hub over NATS, did not answer in time); the metric keeps its last value',
    labelNames: ['metric'] as const,
    registers: [this.registry],
  });

  /** When each value read at scrape time was last read: a value kept through failed reads looks fresh without it. */
  readonly lastRead = new Gauge({
    name: 'chorus_metrics_last_read_timestamp_seconds',
    help: 'When a value read at scrape time (such as the hub totals, read over NATS) was last read successfully, in Unix seconds; it keeps its value while reads fail',
    labelNames: ['metric'] as const,
    registers: [this.registry],
  });

  /**
   * A gauge whose value is read at scrape time (the hub's totals). A read that fails or takes
   * longer than `timeoutMs` leaves the gauge at its last value (absent until a first read
   * succeeds) and counts a collect failure, so the rest of the scrape is still served: a NATS
   * outage must not take the process's own metrics with it.
   */
  gauge(
    name: string,
    help: string,
    labelNames: string[],
    collect: (set: (labels: Record<string, string>, value: number) => void) => Promise<void>,
    timeoutMs = DEFAULT_COLLECT_TIMEOUT_MS,
  ): void {
    // Registered once first read: a gauge without labels is exported as 0 until set, which a
    // process that starts during an outage would report as a reset of the hub's totals.
    const gauge = new Gauge({ name, help, labelNames, registers: [] });
    let registered = false;
    // Read by `text` before the registry is serialized, not in the gauge's own collect: prom-client
    // reads every metric at once, so a failure counted in a collect missed the scrape it happened in.
    this.scrapeReads.push(async () => {
      const values: Array<[Record<string, string>, number]> = [];
      try {
        await withTimeout(collect((labels, value) => values.push([labels, value])), timeoutMs);
      } catch {
        this.collectFailures.inc({ metric: name });
        return;
      }
      for (const [labels, value] of values) gauge.set(labels, value);
      this.lastRead.set({ metric: name }, Date.now() / 1000);
      if (!registered) {
        this.registry.registerMetric(gauge);
        registered = true;
      }
    });
  }

  /** A counter whose total is read at scrape time from the process's own bookkeeping. */
  counterFrom(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  async text(): Promise<string> {
    await Promise.all(this.scrapeReads.map((read) => read()));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
