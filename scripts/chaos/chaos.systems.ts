import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { NatsServerProcess, findNatsServerBinary } from '@chorus/bus';
import { freePort, spawnApp, startDeployment, startNatsCluster, waitForOutput, type AppProcess, type ChorusDeployment, type NatsCluster } from '../cluster/cluster.launcher';

/** One nats-server with JetStream on a fixed port, so it can be stopped and started again as the same server. */
export interface SingleNats {
  urls: string[];
  server: NatsServerProcess;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSingleNats(dir: string): Promise<SingleNats> {
  const binary = findNatsServerBinary([process.env.NATS_SERVER_BIN]);
  if (!binary) throw new Error('nats-server is not on PATH (Debian/Ubuntu: apt-get install nats-server)');
  mkdirSync(dir, { recursive: true });
  const options = { binary, dir, host: '127.0.0.1', port: await freePort(), logFile: join(dir, 'nats-server.log') };
  const handle: SingleNats = {
    urls: [`nats://127.0.0.1:${options.port}`],
    server: await NatsServerProcess.start(options),
    restart: async () => {
      handle.server = await NatsServerProcess.start(options);
    },
    stop: async () => handle.server.stop(),
  };
  return handle;
}

/** Chorus in one process (`npm start`'s launcher) against `urls`. */
export async function startAllInOne(root: string, urls: string[], env: Record<string, string> = {}): Promise<AppProcess> {
  const app = spawnApp(root, 'chorus', 1, { NATS_URL: urls.join(','), CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: 'warn', ...env });
  await waitForOutput(app, /Chorus ready/);
  return app;
}

export { spawnApp, startDeployment, startNatsCluster, waitForOutput, type AppProcess, type ChorusDeployment, type NatsCluster };

/** A fresh working folder for one scenario. */
export function scenarioDir(base: string, name: string): string {
  const dir = join(base, name.replace(/[^a-z0-9]+/gi, '-').toLowerCase());
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}
