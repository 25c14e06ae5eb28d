import type { Subscription } from '@nats-io/transport-node';
import { LogThrottle, type Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import type { Responder } from './request-reply';
import { BusErrorCodes } from './bus.errors';

/** A request as a stock NestJS `ClientProxy` (`Transport.NATS`) sends it with `send(pattern, data)`. */
interface NestPacket {
  id?: string;
  pattern?: unknown;
  data?: unknown;
}

/** An error a Nest client receives as `err` (it rejects the `send()` observable with it). */
export interface NestError {
  status: 'error';
  message: string;
  [key: string]: unknown;
}

const encoder = new TextEncoder();

/**
 * Answers `client.send(pattern, data)` from any NestJS app that uses the stock NATS transport, in
 * that transport's own packet format (`{id, pattern, data}` in, `{id, response|err, isDisposed}`
 * out), so such apps can use Chorus without depending on Chorus code.
 */
export function serveNestPattern(
  bus: Bus,
  pattern: string,
  queue: string,
  log: Logger,
  handle: (data: unknown) => Promise<{ response: unknown } | { err: NestError }>,
): Responder {
  // Anyone on the bus can send such messages: a flood of them must not flood the log.
  const ignoredLines = new LogThrottle(10, 60_000);
  // Requests being answered: stopping waits for them (their answers go out before the connection closes).
  const inFlight = new Set<Promise<void>>();
  const sub: Subscription = bus.nc.subscribe(pattern, {
    queue,
    callback: (err, msg) => {
      if (err) return;
      if (!msg.reply) {
        // `emit` (an event pattern) has no reply subject: nobody could hear what became of it.
        const { write, suppressed } = ignoredLines.take();
        if (write) log.warn({ pattern, bytes: msg.data.length, ...(suppressed > 0 ? { not_logged_before: suppressed } : {}) }, `a message on ${pattern} without a reply subject (ClientProxy.emit?) was ignored: use send(), whose reply carries the result`);
        return;
      }
      const answering = (async () => {
        let packet: NestPacket = {};
        let reply: Record<string, unknown>;
        try {
          const parsed = msg.json<unknown>();
          // JSON that is no packet (null, a number, an array) has no id and no data: the handler says what is wrong.
          packet = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as NestPacket) : {};
          const outcome = await handle(packet.data);
          reply = { id: packet.id, ...outcome, isDisposed: true };
        } catch (e) {
          if (!(e instanceof SyntaxError)) log.error({ err: e, pattern }, 'Nest-compatible request failed');
          const message = e instanceof SyntaxError ? `the request is not a JSON Nest packet: ${e.message}` : 'internal error';
          reply = { id: packet.id, err: { status: 'error', message }, isDisposed: true };
        }
        let data = encoder.encode(JSON.stringify(reply));
        const max = bus.nc.info?.max_payload;
        if (max !== undefined && data.length > max) {
          const message = `the reply (${data.length} bytes) is larger than the server's max_payload (${max} bytes)`;
          data = encoder.encode(JSON.stringify({ id: packet.id, err: { status: 'error', message, code: BusErrorCodes.ReplyTooLarge }, isDisposed: true }));
        }
        msg.respond(data);
      })().catch((e) => log.error({ err: e, pattern }, 'Nest-compatible request could not be answered'));
      inFlight.add(answering);
      void answering.finally(() => inFlight.delete(answering));
    },
  });
  return {
    // No new request is taken; those in flight are answered first (a handler that waits must be
    // told to stop waiting by its owner, as the ingress does when it closes).
    stop: async () => {
      await sub.drain();
      await Promise.allSettled([...inFlight]);
    },
  };
}
