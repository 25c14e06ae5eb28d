import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, coalesceSocketWrites, defaultBusOptions } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

interface CountedSocket {
  _write(...args: unknown[]): void;
  _writev(...args: unknown[]): void;
}

/** Counts the writes the connection's socket hands the system (`_write` and `_writev` calls). */
function countWrites(nc: NatsConnection): { count(): number } {
  const socket = (nc as unknown as { protocol: { transport: { socket: CountedSocket } } }).protocol.transport.socket;
  let writes = 0;
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (...args) => {
    writes++;
    write(...args);
  };
  socket._writev = (...args) => {
    writes++;
    writev(...args);
  };
  return { count: () => writes };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('coalesceSocketWrites', () => {
  let nats: NatsHandle;
  let bus: Bus;
  let reader: NatsConnection;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
    reader = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await reader?.close();
    await bus?.close();
    await nats?.stop();
  });

  it('coalesceSocketWrites - applies to the pinned nats.js: the messages of one turn reach the server in two writes, all of them and in order', async () => {
    // A library update that changes NodeTransport turns the coalescing off: this says so, to look again.
    expect(coalesceSocketWrites()).toBe(true);
    const received: string[] = [];
    const all = new Promise<void>((resolve) => {
      reader.subscribe('test.burst', { callback: (_e, m) => void (received.push(m.string()) === 200 && resolve()) });
    });
    await reader.flush();
    const writes = countWrites(bus.nc);
    await nextTurn();
    const before = writes.count();
    // Each publish in a microtask of its own, as a busy process's handlers do: without coalescing,
    // the connection hands the socket each one in its own write.
    for (let i = 0; i < 200; i++) {
      await Promise.resolve();
      bus.nc.publish('test.burst', `m${i}`);
    }
    await nextTurn();
    expect(writes.count() - before).toBeLessThanOrEqual(2);
    await all;
    expect(received).toEqual(Array.from({ length: 200 }, (_, i) => `m${i}`));
  });

  it('coalesceSocketWrites - a lone message goes out at once, without waiting for the end of the turn', async () => {
    coalesceSocketWrites();
    const writes = countWrites(bus.nc);
    await nextTurn();
    const before = writes.count();
    bus.nc.publish('test.lone', 'x');
    // The connection hands over what it buffered in a microtask queued by the publish, before this one.
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    expect(writes.count() - before).toBe(1);
  });

  it('coalesceSocketWrites - requests sent from separate microtasks of one turn (held by the cork) each get their own reply', async () => {
    const sub = reader.subscribe('test.echo', { callback: (_e, m) => void m.respond(m.data) });
    await reader.flush();
    const writes = countWrites(bus.nc);
    await nextTurn();
    const before = writes.count();
    const answers: Array<Promise<string>> = [];
    for (let i = 0; i < 20; i++) {
      await Promise.resolve();
      answers.push(bus.nc.request('test.echo', `n${i}`, { timeout: 2000 }).then((m) => m.string()));
    }
    await nextTurn();
    expect(writes.count() - before).toBeLessThanOrEqual(2);
    expect(await Promise.all(answers)).toEqual(Array.from({ length: 20 }, (_, i) => `n${i}`));
    sub.unsubscribe();
  });

  it('coalesceSocketWrites - a connection closed while its turn is corked still sends what it had handed the socket', async () => {
    coalesceSocketWrites();
    const received: string[] = [];
    const all = new Promise<void>((resolve) => {
      reader.subscribe('test.closing', { callback: (_e, m) => void (received.push(m.string()) === 50 && resolve()) });
    });
    await reader.flush();
    const nc = await connect({ servers: nats.url });
    await nextTurn();
    for (let i = 0; i < 50; i++) {
      await Promise.resolve();
      nc.publish('test.closing', `c${i}`);
    }
    // The connection hands the last publish to the socket in a microtask; close() destroys the socket at once.
    await Promise.resolve();
    await nc.close();
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, 3000))]);
    expect(received).toEqual(Array.from({ length: 50 }, (_, i) => `c${i}`));
  });
});
