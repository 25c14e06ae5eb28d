import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { nanos } from '@nats-io/transport-node';
import type { Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { readOrdered } from './ordered-read';
import { isRevisionConflict } from './transient-error';
import { refuseUnclustered, replicasError } from './stream.topology';

export { isRevisionConflict };

export interface StoredValue<T> {
  value: T;
  revision: number;
}

export interface KeyValueStoreOptions {
  /** Values kept per key (1 = latest only). */
  history: number;
  /** Bucket-wide age limit in ms; 0 keeps values until deleted. */
  ttlMs: number;
  /** The setting `ttlMs` comes from, named when the bucket had another (CHORUS_HUB_LEASE_MS). */
  ttlSetting?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A JSON key-value bucket on JetStream, with revision-checked writes. */
export class KeyValueStore<T> {
  private constructor(
    private readonly kv: KV,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly bucket: string,
  ) {}

  static async open<T>(bus: Bus, bucket: string, options: KeyValueStoreOptions, log?: Logger): Promise<KeyValueStore<T>> {
    const kv = await new Kvm(bus.js).create(bucket, {
      history: options.history,
      ttl: options.ttlMs,
      replicas: bus.options.replicas,
    });
    const before = await applyTtl(bus.jsm, bucket, options.ttlMs, bus.options.replicas);
    if (before !== undefined) {
      // Replicas started with different values rewrite it at each start (for a lease: renewals
      // spaced for a longer one outlive the key, and the replicas take it from each other).
      log?.warn(
        { bucket, ttl_ms: options.ttlMs, previous_ttl_ms: before },
        `bucket ${bucket} kept its entries ${before} ms (from an earlier run, or another replica); now ${options.ttlMs} ms${options.ttlSetting ? `: start every replica with the same ${options.ttlSetting}` : ''}`,
      );
    }
    return new KeyValueStore<T>(kv, bus.js, bus.jsm, bucket);
  }

  async get(key: string): Promise<StoredValue<T> | null> {
    const entry = await this.kv.get(key);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
    return { value: JSON.parse(decoder.decode(entry.value)) as T, revision: entry.revision };
  }

  /** Writes only if the key does not exist; throws when it does. */
  create(key: string, value: T): Promise<number> {
    return this.kv.create(key, encoder.encode(JSON.stringify(value)));
  }

  /** Writes only if the stored revision is still `revision`; throws on a concurrent change. */
  update(key: string, value: T, revision: number): Promise<number> {
    return this.kv.update(key, encoder.encode(JSON.stringify(value)), revision);
  }

  put(key: string, value: T): Promise<number> {
    return this.kv.put(key, encoder.encode(JSON.stringify(value)));
  }

  /** Deletes `key`; with `revision`, only while that is still its latest revision (else a revision conflict). */
  async delete(key: string, revision?: number): Promise<void> {
    if (revision !== undefined && revision < 1) throw new Error(`a revision-checked delete of ${key} needs a revision, got ${revision}`);
    return this.kv.delete(key, revision !== undefined ? { previousSeq: revision } : undefined);
  }

  /**
   * The latest message of the keys matching `filter` (one key, or a pattern such as `*.<id>`), read
   * through the stream's leader (the message-get API), never from a replica: a key's value or
   * delete marker. Reads served by any replica (direct gets, consumers placed on a follower) can lag
   * behind for a moment, longer after a cluster lost a node, and answer "no such key" for one just
   * written. Null when nothing matches or the latest is a delete.
   */
  async latest(filter: string): Promise<{ key: string; value: T; revision: number } | null> {
    const prefix = `$KV.${this.bucket}.`;
    // null when no message matches
    const m = await this.jsm.streams.getMessage(`KV_${this.bucket}`, { last_by_subj: `${prefix}${filter}` });
    const op = m?.header?.get('KV-Operation');
    if (!m || op === 'DEL' || op === 'PURGE' || m.data.length === 0) return null;
    return { key: m.subject.slice(prefix.length), value: JSON.parse(decoder.decode(m.data)) as T, revision: m.seq };
  }

  /**
   * Keys matching a subject-style filter (`*` one token, `>` the rest). Read with our own ordered
   * consumer, which stops at the last key present: the client's `keys()` can wait for an idle
   * heartbeat (seconds) to decide it has seen them all.
   */
  async keys(filter = '>'): Promise<string[]> {
    const prefix = `$KV.${this.bucket}.`;
    const out: string[] = [];
    for await (const m of readOrdered(this.js, `KV_${this.bucket}`, `${prefix}${filter}`, { lastPerSubject: true, headersOnly: true })) {
      const op = m.headers?.get('KV-Operation');
      if (op !== 'DEL' && op !== 'PURGE') out.push(m.subject.substring(prefix.length));
    }
    return out;
  }

  /**
   * When the bucket's oldest and newest stored values were written, and their revisions (null for
   * an empty bucket). With `history: 1` every stored value is a key's latest.
   */
  async span(): Promise<{ first: Date; last: Date; firstRevision: number; lastRevision: number } | null> {
    const { state } = await this.jsm.streams.info(`KV_${this.bucket}`);
    if (state.messages === 0) return null;
    return { first: new Date(state.first_ts), last: new Date(state.last_ts), firstRevision: state.first_seq, lastRevision: state.last_seq };
  }

  /**
   * When the bucket (its stream) was made. A bucket deleted and made again under the same name
   * numbers its revisions from 1 again: a revision read before means nothing in it.
   */
  async createdAt(): Promise<string> {
    return (await this.jsm.streams.info(`KV_${this.bucket}`)).created;
  }

  /**
   * Every live entry whose key matches `filter`, streamed from one ordered consumer, in the order
   * they were last written; with `since`, only those written at or after it (a key written several
   * times in the window may appear once per stored revision, the latest last); with `fromRevision` /
   * `beforeRevision`, only the revisions in between (a range of n revisions holds at most n values,
   * whatever its time span).
   */
  async *entries(filter = '>', options: { since?: Date; fromRevision?: number; beforeRevision?: number } = {}): AsyncGenerator<{ key: string } & StoredValue<T>> {
    const prefix = `$KV.${this.bucket}.`;
    const read = options.fromRevision ? { startSeq: options.fromRevision } : options.since ? { startTime: options.since } : { lastPerSubject: true };
    for await (const m of readOrdered(this.js, `KV_${this.bucket}`, `${prefix}${filter}`, read)) {
      // In stream order, so the first revision past the range ends the read.
      if (options.beforeRevision !== undefined && m.seq >= options.beforeRevision) break;
      const op = m.headers?.get('KV-Operation');
      if (op === 'DEL' || op === 'PURGE' || m.data.length === 0) continue;
      yield { key: m.subject.substring(prefix.length), value: JSON.parse(decoder.decode(m.data)) as T, revision: m.seq };
    }
  }
}

/**
 * Brings an existing bucket's age limit to the one asked for, as the streams' are (stream.topology):
 * the client sets it only when it creates the bucket, so a changed CHORUS_HUB_RETENTION_MS or
 * CHORUS_HUB_LEASE_MS was ignored for good (a lease raised to 10 s kept expiring after the 3 s the
 * bucket was created with, and the hubs took it from each other every few seconds). The duplicate
 * window may not exceed the age limit: it is shortened with it. Returns the age limit it replaced,
 * in ms (undefined when it was already right).
 */
async function applyTtl(jsm: JetStreamManager, bucket: string, ttlMs: number, asked: number): Promise<number | undefined> {
  const info = await jsm.streams.info(`KV_${bucket}`);
  const c = info.config;
  // Only up, as for the streams (see ensureStream).
  const replicas = Math.max(c.num_replicas, asked);
  const maxAge = nanos(ttlMs);
  // The client sets the replica count only when it creates the bucket, too (see ensureStream).
  if (c.max_age === maxAge && c.num_replicas === replicas) return undefined;
  if (c.num_replicas !== replicas) refuseUnclustered(c.name, c.num_replicas, replicas, info.cluster?.name);
  const duplicateWindow = maxAge > 0 && c.duplicate_window > maxAge ? maxAge : c.duplicate_window;
  await jsm.streams.update(c.name, { ...c, max_age: maxAge, duplicate_window: duplicateWindow, num_replicas: replicas }).catch((e: unknown) => {
    throw replicasError(c.name, c.num_replicas, replicas, e);
  });
  return c.max_age === maxAge ? undefined : c.max_age / 1e6;
}
