import { parseChorusConfig } from '@chorus/config';
import { resolveNats, type NatsProbes } from './nats.resolver';

const config = (env: Record<string, string> = {}) => parseChorusConfig(env, '/tmp/chorus-resolver');

function probes(overrides: Partial<NatsProbes>): NatsProbes {
  return {
    isPortOpen: async () => false,
    findBinary: () => undefined,
    start: async () => {
      throw new Error('not expected to start a server');
    },
    ...overrides,
  };
}

describe('resolveNats', () => {
  it('resolveNats - NATS_URL wins', async () => {
    const r = await resolveNats(config({ NATS_URL: 'nats://a:1,nats://b:2' }), probes({ isPortOpen: async () => true }));
    expect(r.servers).toEqual(['nats://a:1', 'nats://b:2']);
  });

  it('resolveNats - else a server already listening on 127.0.0.1:4222', async () => {
    const asked: Array<[string, number]> = [];
    const r = await resolveNats(config(), probes({ isPortOpen: async (h, p) => (asked.push([h, p]), true) }));
    expect(asked).toEqual([['127.0.0.1', 4222]]);
    expect(r.servers).toEqual(['nats://127.0.0.1:4222']);
  });

  it('resolveNats - else starts nats-server from PATH with JetStream data under .chorus/nats', async () => {
    let options: { dir: string; port: number } | undefined;
    const r = await resolveNats(
      config(),
      probes({
        findBinary: () => '/usr/sbin/nats-server',
        start: async (o) => {
          options = o;
          return { url: 'nats://127.0.0.1:4222' } as never;
        },
      }),
    );
    expect(options).toEqual(expect.objectContaining({ binary: '/usr/sbin/nats-server', port: 4222, dir: '/tmp/chorus-resolver/.chorus/nats' }));
    expect(r.servers).toEqual(['nats://127.0.0.1:4222']);
  });

  it('resolveNats - else fails with a message that says how to get one', async () => {
    await expect(resolveNats(config(), probes({}))).rejects.toThrow(/install nats-server[\s\S]*NATS_URL/);
  });
});
