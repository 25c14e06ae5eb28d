import { nanos } from '@nats-io/transport-node';
import type { Bus } from './nats.bus';

export interface CountedEventsOptions {
  stream: string;
  /** Events are stored on `<prefix>.<kind>.<scope>` (the scope: a tenant). */
  prefix: string;
  /** How long events count; totals cover this window. */
  maxAgeMs: number;
}

export interface EventCounts {
  counts: Record<string, number>;
  /** When the oldest event still counted was stored; null when there is none. */
  since: string | null;
}

const EMPTY = new Uint8Array(0);

/**
 * Exact, durable counters shared by every replica: each event is an empty message on
 * `<prefix>.<kind>.<scope>` whose `Nats-Msg-Id` names the event, so recording the same event twice
 * (a retry, a redelivery) counts once, and the totals are the stream's per-subject message counts.
 */
export class CountedEvents {
  private constructor(
    private readonly bus: Bus,
    private readonly options: CountedEventsOptions,
  ) {}

  static async open(bus: Bus, options: CountedEventsOptions): Promise<CountedEvents> {
    await bus.ensureStream({
      name: options.stream,
      subjects: [`${options.prefix}.>`],
      duplicate_window: nanos(bus.options.duplicateWindowMs),
      max_age: nanos(options.maxAgeMs),
    });
    return new CountedEvents(bus, options);
  }

  /** Counts `kind` in `scope` once for `eventId`, however many times it is recorded. */
  async record(kind: string, scope: string, eventId: string): Promise<void> {
    await this.bus.js.publish(`${this.options.prefix}.${kind}.${scope}`, EMPTY, { msgID: eventId });
  }

  /** Counts per kind, in one scope or (without one) in all of them. */
  async counts(scope?: string): Promise<EventCounts> {
    const filter = scope ? `${this.options.prefix}.*.${scope}` : `${this.options.prefix}.>`;
    const info = await this.bus.jsm.streams.info(this.options.stream, { subjects_filter: filter });
    const counts: Record<string, number> = {};
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
      const kind = subject.slice(this.options.prefix.length + 1).split('.')[0];
      counts[kind] = (counts[kind] ?? 0) + n;
    }
    return { counts, since: info.state.messages > 0 ? info.state.first_ts : null };
  }
}
