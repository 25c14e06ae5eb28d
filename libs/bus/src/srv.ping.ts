import type { Bus } from './nats.bus';
import { isNoResponders } from './request-reply';

/** `alive`: it answered; `gone`: nobody serves its subject any more (NATS says so at once); `silent`: no answer in time. */
export type PingOutcome = 'alive' | 'gone' | 'silent';

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
