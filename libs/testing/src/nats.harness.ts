import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsServerProcess, findNatsServerBinary } from '@chorus/bus';

export interface NatsHandle {
  /** Client URL, credentials included when the server needs them. */
  url: string;
  kind: 'env' | 'binary' | 'testcontainers';
  /** The child process, in binary mode: fault tests stop, kill and restart it. */
  server?: NatsServerProcess;
  /** The folder holding the config and the JetStream store, in binary mode. */
  dir?: string;
  /** The server's log (permission violations, …), in binary mode. */
  logFile?: string;
  /** `http://127.0.0.1:<port>` of its HTTP monitoring endpoint (`/varz`, `/connz`), with `monitoring`. */
  monitorUrl?: string;
  stop(): Promise<void>;
}

export interface StartNatsOptions {
  /** Require a server of our own (fault tests that stop or restart it); never use NATS_URL. */
  own?: boolean;
  /** Extra nats-server config (binary mode only). */
  extraConfig?: string;
  /** Extra settings inside the server's `jetstream {}` block (binary mode only). */
  jetstreamConfig?: string;
  /** Serve the HTTP monitoring endpoint on a free port (`monitorUrl`); implies `own`, binary mode only. */
  monitoring?: boolean;
}

/**
 * A real nats-server with JetStream for a test suite: `NATS_URL` when set (and the suite does not
 * need a server of its own), else the `nats-server` binary on a free port with a temporary store
 * (removed on stop), else a container through testcontainers (needs Docker).
 * `NATS_HARNESS=env|binary|testcontainers` forces one.
 */
export async function startNats(options: StartNatsOptions = {}): Promise<NatsHandle> {
  const force = process.env.NATS_HARNESS;
  if (process.env.NATS_URL && !options.own && !options.monitoring && (!force || force === 'env')) {
    return { url: process.env.NATS_URL, kind: 'env', stop: async () => undefined };
  }
  const binary = force === 'testcontainers' ? undefined : findNatsServerBinary([process.env.NATS_SERVER_BIN]);
  if (binary) {
    const dir = mkdtempSync(join(tmpdir(), 'chorus-nats-'));
    const logFile = join(dir, 'nats-server.log');
    const extraConfig = [options.extraConfig, options.monitoring ? 'http: "127.0.0.1:-1"' : undefined].filter(Boolean).join('\n') || undefined;
    const server = await NatsServerProcess.start({ binary, dir, host: '127.0.0.1', port: -1, extraConfig, jetstreamConfig: options.jetstreamConfig, logFile });
    return {
      url: server.url,
      kind: 'binary',
      server,
      dir,
      logFile,
      monitorUrl: server.monitorUrl,
      stop: async () => {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (options.monitoring) throw new Error('the HTTP monitoring endpoint needs the nats-server binary (NATS_SERVER_BIN or PATH)');
  return startContainer();
}

async function startContainer(): Promise<NatsHandle> {
  // Loaded only here: testcontainers is a dev dependency and needs a Docker engine.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { NatsContainer } = require('@testcontainers/nats') as typeof import('@testcontainers/nats');
  const container = await new NatsContainer(process.env.NATS_IMAGE ?? 'nats:2.10-alpine').withJetStream().start();
  const o = container.getConnectionOptions() as { servers: string; user?: string; pass?: string };
  const auth = o.user ? `${o.user}:${o.pass}@` : '';
  return {
    url: `nats://${auth}${String(o.servers).replace(/^nats:\/\//, '')}`,
    kind: 'testcontainers',
    stop: async () => {
      await container.stop();
    },
  };
}
