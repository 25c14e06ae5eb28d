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
  /** When the lease this holder last created or renewed expires at the latest: TTL after the request was sent. */
  private validUntil = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private transition: Promise<void> = Promise.resolve();
  /** Whether this replica said it stands by since it last held the lease (said once, not on every try). */
  private saidStandby = false;

  private constructor(
    private readonly kv: KeyValueStore<LeaseValue>,
    private readonly options: LeaseOptions,
    private readonly log: Logger,
  ) {}

  static async open(bus: Bus, options: LeaseOptions, log: Logger): Promise<LeaderLease> {
    const kv = await KeyValueStore.open<LeaseValue>(bus, options.bucket, { history: 1, ttlMs: options.ttlMs });
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
    const tick = async () => {
      if (this.stopped) return;
      try {
        if (this.isLeader) await this.renew(onLose);
        else await this.tryAcquire(onAcquire);
      } catch (e) {
        this.log.warn({ err: e, lease: this.options.name }, 'lease check failed');
        if (this.isLeader) this.stepDown(onLose, 'lease check failed');
      }
      if (!this.stopped) this.timer = setTimeout(() => void tick(), Math.max(50, Math.floor(this.options.ttlMs / 3)));
    };
    await tick();
    await this.transition;
  }

  /** Stops contending; a holder releases its lease so a standby takes over at once. */
  async stop(onLose: () => Promise<void>): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.transition;
    if (this.isLeader) {
      this.stepDown(onLose, 'stopping');
      await this.transition;
      await this.kv.delete(this.options.name).catch(() => undefined);
    }
  }

  private async tryAcquire(onAcquire: () => Promise<void>): Promise<void> {
    try {
      const sent = Date.now();
      this.revision = await this.kv.create(this.options.name, { holder: this.holder, since: new Date().toISOString() });
      this.validUntil = sent + this.options.ttlMs;
    } catch (e) {
      if (!isRevisionConflict(e)) throw e;
      // Someone holds it: this replica stands by, and says so once.
      if (!this.saidStandby) this.log.info({ lease: this.options.name, holder: this.holder }, 'lease held by another replica; standing by');
      this.saidStandby = true;
      return;
    }
    this.saidStandby = false;
    this.log.info({ lease: this.options.name, holder: this.holder }, 'lease acquired; now active');
    // Not awaited: the next renewal is due in a third of the lease, however long becoming active takes.
    this.transition = this.transition.then(onAcquire).catch((e) => this.log.error({ err: e }, 'becoming active failed'));
  }

  private async renew(onLose: () => Promise<void>): Promise<void> {
    try {
      const sent = Date.now();
      this.revision = await this.kv.update(this.options.name, { holder: this.holder, since: new Date().toISOString() }, this.revision);
      this.validUntil = sent + this.options.ttlMs;
    } catch (e) {
      if (!isRevisionConflict(e)) throw e;
      this.stepDown(onLose, 'lease taken over');
    }
  }

  private stepDown(onLose: () => Promise<void>, reason: string): void {
    this.revision = 0;
    this.validUntil = 0;
    this.log.warn({ lease: this.options.name, reason }, 'lease lost; now standby');
    this.transition = this.transition.then(onLose).catch((e) => this.log.error({ err: e }, 'stepping down failed'));
  }
}
