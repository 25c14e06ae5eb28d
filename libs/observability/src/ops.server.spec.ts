import { createServer } from 'node:net';
import { createRootLogger } from './logger';
import { Metrics } from './metrics';
import { startOpsServer } from './ops.server';

describe('startOpsServer', () => {
  it('startOpsServer - serves /health, /ready and /metrics whatever the query string', async () => {
    const ops = await startOpsServer({ host: '127.0.0.1', port: 0 }, new Metrics('test'), async () => ({ ready: true, detail: {} }), createRootLogger({ name: 'test', level: 'silent' }));
    try {
      for (const path of ['/health?x', '/ready?probe=1', '/metrics?format=text']) expect({ path, status: (await fetch(`${ops.url}${path}`)).status }).toEqual({ path, status: 200 });
      expect((await fetch(`${ops.url}/nope`)).status).toBe(404);
    } finally {
      await ops.close();
    }
  });

  it('startOpsServer - a port already taken: names CHORUS_OPS_PORT, the address and what to do, not only EADDRINUSE', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as { port: number };
    try {
      const started = startOpsServer({ host: '127.0.0.1', port }, new Metrics('test'), async () => ({ ready: true, detail: {} }), createRootLogger({ name: 'test', level: 'silent' }));
      await expect(started).rejects.toThrow(`CHORUS_OPS_PORT ${port} is in use by another process (127.0.0.1:${port}): choose another port`);
      await expect(started).rejects.toHaveProperty('cause.code', 'EADDRINUSE');
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
