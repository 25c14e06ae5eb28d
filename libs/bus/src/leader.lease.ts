import { randomUUID } from 'node:crypto';
import type { Logger } from '@chorus/observability';
import { KeyValueStore, isRevisionConflict } from './kv.store';
import type { Bus } from './nats.bus';

export interface LeaseOptions {
  /** The KV bucket holding leases; its TTL is the lease's. */
  bucket: string;
  /** What is being led (one key per role). */
  name: string;
  /** A lease not renewed for this long expires, and a standby takes over. */
  ttlMs: number;
  /** The setting `ttlMs` comes from (CHORUS_HUB_LEASE_MS), named when the bucket had another. */
  ttlSetting?: string;
}

interface LeaseValue {
  holder: string;
  since: string;
}

/**
 * One active holder among replicas: a key in a KV bucket whose TTL is the lease, created by whoever
 * finds it absent and renewed (revision-checked) by its holder every third of the TTL. A holder
 * that cannot renew steps down; a holder that dies is replaced once its lease expires.
 */
export class LeaderLease {
  readonly holder = randomUUID();
  private revision = 0;
  /** Counts acquisitions and step-downs: a renewal or a failed activation from an earlier term changes nothing. */
  private term = 0;
  /** When the lease this holder last created or renewed expires at the latest: TTL after the request was sent. */
  private validUntil = 0;
  private timer?: NodeJS.Timeout;
  /** The check under way, if any (stop() waits for it: a lease won while stopping is released again). */
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;
  private transition: Promise<void> = Promise.resolve();
  /** Whether this replica said it stands by since it last held the lease (said once, not on every try). */
  private saidStandby = false;
  /** Activations that failed in a row, and when this replica may contend again after the last one. */
  private failures = 0;
  private notBefore = 0;
  /** The last try to create the lease got no answer (it may have been stored all the same). */
  private createUnanswered = false;
  /** When the lease's bucket was made, as read when this holder won the lease (unknown if that read failed). */
  private bucketCreated?: string;

  private constructor(
    private readonly kv: KeyValueStore<LeaseValue>,
    private readonly options: LeaseOptions,
    private readonly log: Logger,
  ) {}

  static async open(bus: Bus, options: LeaseOptions, log: Logger): Promise<LeaderLease> {
    const kv = await KeyValueStore.open<LeaseValue>(bus, options.bucket, { history: 1, ttlMs: options.ttlMs, ttlSetting: options.ttlSetting }, log);
    return new LeaderLease(kv, options, log);
  }

  get isLeader(): boolean {
    return this.revision > 0;
  }

  /**
   * True while this holder's lease cannot have expired: it won or renewed it less than the TTL ago.
   * A holder whose process stalled (a long GC pause, a stopped process, a starved machine) still
   * thinks it leads until its next renewal fails; by then a standby may lead. Whatever only the
   * leader may do (write the ledger) checks this first, so a stalled holder that resumes writes
   * nothing after its lease ran out.
   */
  get holds(): boolean {
    return this.isLeader && Date.now() < this.validUntil;
  }

  /**
   * Starts contending; `onAcquire`/`onLose` run one at a time, in order, while the lease goes on
   * being renewed (a holder taking over a large backlog takes longer than the lease to become
   * active: its renewals must not wait for that). Resolves after the first attempt (and
   * `onAcquire`, when it won).
   */
  async start(onAcquire: () => Promise<void>, onLose: () => Promise<void>): Promise<void> {
    const check = async () => {
      try {
        if (this.isLeader) await this.renew(onLose);
        else if (!this.stopped && Date.now() >= this.notBefore) await this.tryAcquire(onAcquire, onLose);
      } catch (e) {
        this.log.warn({ err: e, lease: this.options.name }, 'lease check failed');
        if (this.isLeader) this.stepDown(onLose, 'lease check failed');
      }
    };
    const tick = async () => {
      this.ticking = check();
      await this.ticking;
      // A stopping holder goes on renewing until stop() has stepped down (its activation may still be running).
      if (!this.stopped || this.isLeader) this.timer = setTimeout(() => void tick(), Math.max(50, Math.floor(this.options.ttlMs / 3)));
    };
    await tick();
    await this.settled();
  }

  /** Stops contending; a holder releases its lease so a standby takes over at once. */
  async stop(onLose: () => Promise<void>): Promise<void> {
    this.stopped = true;
    await this.ticking;
    await this.settled();
    if (this.isLeader) {
      const revision = this.revision;
      this.stepDown(onLose, 'stopping');
      await this.settled();
      await this.release(revision);
    }
    if (this.timer) clearTimeout(this.timer);
  }

  /** Waits for onAcquire/onLose, including those queued while waiting. */
  private async settled(): Promise<void> {
    for (let t = this.transition; ; t = this.transition) {
      await t;
      if (t === this.transition) return;
    }
  }

  private async tryAcquire(onAcquire: () => Promise<void>, onLose: () => Promise<void>): Promise<void> {
    try {
      const sent = Date.now();
      this.revision = await this.kv.create(this.options.name, { holder: this.holder, since: new Date().toISOString() });
      this.validUntil = sent + this.options.ttlMs;
      this.createUnanswered = false;
      this.bucketCreated = await this.kv.createdAt().catch(() => undefined);
    } catch (e) {
      if (!isRevisionConflict(e)) {
        this.createUnanswered = true;
        throw e;
      }
      if (this.createUnanswered) {
        // The last try timed out, but the server may have stored it: a lease this replica holds
        // without knowing would keep everyone out for a TTL. Released, it is contended for at once.
        this.createUnanswered = false;
        const current = await this.kv.get(this.options.name);
        if (current?.value.holder === this.holder) {
          this.log.info({ lease: this.options.name }, 'a lease won by a request that timed out is released');
          return this.release(current.revision);
        }
      }
      // Someone holds it: this replica stands by, and says so once.
      if (!this.saidStandby) {
        // Named apart: this replica's id as `holder` read as if it stood by behind itself.
        const held = await this.kv.get(this.options.name).catch(() => null);
        this.log.info({ lease: this.options.name, replica: this.holder, holder: held?.value.holder ?? 'unknown' }, 'lease held by another replica; standing by');
      }
      this.saidStandby = true;
      return;
    }
    this.saidStandby = false;
    this.log.info({ lease: this.options.name, holder: this.holder }, 'lease acquired; now active');
    // Not awaited: the next renewal is due in a third of the lease, however long becoming active takes.
    const term = ++this.term;
    this.transition = this.transition
      .then(onAcquire)
      .then(() => void (this.failures = 0))
      .catch((e) => this.giveUp(e, term, onLose));
  }

  /**
   * Becoming active failed (a JetStream request timed out while the cluster re-elected after losing
   * a node, say): holding on to the lease would keep every replica standing by behind a holder that
   * is not active. The holder steps down and releases the lease (only the one it won: a standby may
   * have taken it over meanwhile), and keeps out of the contest for a while (a lease time, longer
   * after each failure in a row, with jitter), so that a healthy standby wins it rather than this
   * replica again at its next check.
   */
  private giveUp(e: unknown, term: number, onLose: () => Promise<void>): void {
    this.failures += 1;
    const backOffMs = Math.min(this.options.ttlMs * 2 ** (this.failures - 1), 60_000) * (1 + Math.random() / 2);
    this.notBefore = Date.now() + backOffMs;
    this.log.error({ err: e, lease: this.options.name, failures: this.failures, retry_in_ms: Math.round(backOffMs) }, 'becoming active failed; releasing the lease to try again');
    if (this.term !== term || !this.isLeader) return; // lost or stepped down meanwhile: onLose is queued already
    const revision = this.revision;
    this.stepDown(onLose, 'becoming active failed');
    void this.release(revision);
  }

  /** Deletes the lease while `revision` is still its latest (else it was renewed or taken over); failing that, it expires after its TTL. */
  private release(revision: number): Promise<void> {
    return this.kv.delete(this.options.name, revision).catch(() => undefined);
  }

  private async renew(onLose: () => Promise<void>): Promise<void> {
    const term = this.term;
    try {
      const sent = Date.now();
      const revision = await this.kv.update(this.options.name, { holder: this.holder, since: new Date().toISOString() }, this.revision);
      // Stepped down while renewing (becoming active failed): what was just renewed is released again.
      if (this.term !== term) return void (await this.release(revision));
      this.revision = revision;
      this.validUntil = sent + this.options.ttlMs;
    } catch (e) {
      if (this.term !== term) return; // stepped down meanwhile, and released what it held
      if (!isRevisionConflict(e)) throw e;
      const reason = await this.winBack(term);
      if (reason) this.stepDown(onLose, reason);
    }
  }

  /**
   * A renewal refused: the lease was taken over, or it expired first (the renewal came late: a
   * starved process, a long pause). An expired lease that no replica held in between (the lease's
   * bucket stored nothing after this holder's last renewal: a create gets the very next revision)
   * is won back at once, with nothing to rebuild. A hub that stepped down instead made itself active
   * again from scratch (seconds under load), and its lease ran out again meanwhile: it flapped for
   * as long as the load lasted. Returns why the lease is lost, or null when it is kept.
   */
  private async winBack(term: number): Promise<string | null> {
    // Revisions count from 1 again in a bucket deleted and made again while this holder stalled:
    // another replica may have held the lease there up to this holder's revision and let it expire.
    const created = await this.kv.createdAt().catch(() => undefined);
    if (created === undefined || created !== this.bucketCreated) return 'lease renewal refused, and its bucket was made again meanwhile (or could not be read)';
    // Read through the stream's leader: a replica that has not expired the key yet still shows this
    // holder's last renewal, which the leader refused.
    const current = await this.kv.latest(this.options.name).catch(() => undefined);
    if (current === undefined) return 'lease renewal refused, and the lease could not be read';
    if (current && current.revision !== this.revision) {
      if (current.value.holder !== this.holder) return 'lease taken over';
      // Stored by a write of this holder's that it did not see answered: released, not stood by behind.
      await this.release(current.revision);
      return 'lease renewal refused';
    }
    const sent = Date.now();
    let revision: number;
    try {
      revision = await this.kv.create(this.options.name, { holder: this.holder, since: new Date().toISOString() });
    } catch (e) {
      // Unanswered, it may be stored all the same: the next try to acquire looks (tryAcquire).
      if (!isRevisionConflict(e)) this.createUnanswered = true;
      return 'lease expired, and could not be won back';
    }
    if (this.term !== term || revision !== this.revision + 1) {
      await this.release(revision);
      return 'lease expired, and another replica held it meanwhile';
    }
    this.log.warn({ lease: this.options.name, late_ms: sent - this.validUntil }, 'lease expired before its renewal; won back at once (no other replica held it meanwhile)');
    this.revision = revision;
    this.validUntil = sent + this.options.ttlMs;
    return null;
  }

  private stepDown(onLose: () => Promise<void>, reason: string): void {
    this.term += 1;
    this.revision = 0;
    this.validUntil = 0;
    this.log.warn({ lease: this.options.name, reason }, 'lease lost; now standby');
    this.transition = this.transition.then(onLose).catch((e) => this.log.error({ err: e }, 'stepping down failed'));
  }
}
