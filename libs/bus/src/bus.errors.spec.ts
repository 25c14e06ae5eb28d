import { createServer } from 'node:net';
import { createRootLogger } from '@chorus/observability';
import { defaultBusOptions } from './bus.options';
import { NatsUnreachableError } from './bus.errors';
import { Bus } from './nats.bus';

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('NatsUnreachableError', () => {
  it('NatsUnreachableError - nothing answers: names the address and the client\'s word, and says to start nats-server -js there or set NATS_URL', async () => {
    const url = `nats://127.0.0.1:${await closedPort()}`;
    const error = await Bus.connect({ ...defaultBusOptions(), servers: [url] }, createRootLogger({ name: 'test', level: 'silent' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NatsUnreachableError);
    const e = error as NatsUnreachableError;
    expect({ code: e.code, reason: e.reason, refused: e.refused, retryable: e.retryable }).toEqual({ code: 'NATS_UNREACHABLE', reason: 'connection refused', refused: false, retryable: true });
    expect(e.message).toBe(`no NATS server answers at ${url} (connection refused): start nats-server with -js there, or set NATS_URL to where one runs`);
  });

  it('NatsUnreachableError - a server that refused the credentials: says so and which settings give them, not to start a server', () => {
    const cause = Object.assign(new Error('Authorization Violation'), { name: 'AuthorizationError' });
    const e = new NatsUnreachableError(['nats://127.0.0.1:4222'], cause);
    expect({ reason: e.reason, refused: e.refused, cause: e.cause }).toEqual({ reason: 'Authorization Violation', refused: true, cause });
    expect(e.message).toBe(
      'NATS at nats://127.0.0.1:4222 refused the connection (Authorization Violation): check its credentials (CHORUS_NATS_CREDENTIALS, NATS_USER and NATS_PASS, or NATS_TOKEN)',
    );
  });
});
