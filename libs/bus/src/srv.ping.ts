import type { Bus } from './nats.bus';
import { isNoResponders } from './request-reply';

/** `alive`: it answered; `gone`: nobody serves its subject any more (NATS says so at once); `silent`: no answer in time. */
export type PingOutcome = 'alive' | 'gone' | 'silent';

/** A known instance silent this many discovery rounds in a row (missed the round, and its ping) is taken for hung. */
export const SILENT_ROUNDS = 2;

/**
 * The rule ProfileRegistry and ServiceDirectory share for an instance that missed a discovery round
 * and was pinged: its silent rounds in a row after this one, or `drop` when it died or has hung.
 */
export function afterPing(outcome: PingOutcome, silentBefore: number): number | 'drop' {
  const silent = outcome === 'silent' ? silentBefore + 1 : 0;
  return outcome === 'gone' || silent >= SILENT_ROUNDS ? 'drop' : silent;
}

/**
 * Pings one instance of a NATS service on its own subject (`$SRV.PING.<service>.<id>`). A discovery
 * round only waits for the answers that come in quickly, so a process busy with work (every core
 * taken, a long garbage collection) can miss it and look dead; this asks that instance alone, with
 * a longer timeout, before anyone forgets it.
 */
export async function pingInstance(bus: Bus, service: string, id: string, timeoutMs: number): Promise<PingOutcome> {
  const subject = `$SRV.PING.${service}.${id}`;
  try {
    await bus.nc.request(subject, undefined, { timeout: timeoutMs });
    return 'alive';
  } catch (e) {
    return isNoResponders(e) ? 'gone' : 'silent';
  }
}
