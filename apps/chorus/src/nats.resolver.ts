import { join } from 'node:path';
import { NatsServerProcess, findNatsServerBinary, isPortOpen } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';

export interface ResolvedNats {
  servers: string[];
  /** How it was found, for the start-up banner. */
  how: string;
  /** A server this process started (stopped with it). */
  server?: NatsServerProcess;
}

const LOCAL_HOST = '127.0.0.1';
const LOCAL_PORT = 4222;

/**
 * Where `npm start` finds NATS: NATS_URL, else a server already listening on 127.0.0.1:4222, else a
 * `nats-server` on PATH started with JetStream and its data under `.chorus/nats`, else an error
 * saying how to get one.
 */
export interface NatsProbes {
  isPortOpen: (host: string, port: number) => Promise<boolean>;
  findBinary: () => string | undefined;
  start: typeof NatsServerProcess.start;
}

const realProbes: NatsProbes = {
  isPortOpen: (host, port) => isPortOpen(host, port),
  findBinary: () => findNatsServerBinary([process.env.NATS_SERVER_BIN]),
  start: (options) => NatsServerProcess.start(options),
};

export async function resolveNats(config: ChorusConfig, probes: NatsProbes = realProbes): Promise<ResolvedNats> {
  if (config.natsUrl) return { servers: config.bus.servers, how: `NATS_URL=${config.natsUrl}` };
  if (await probes.isPortOpen(LOCAL_HOST, LOCAL_PORT)) {
    return { servers: [`nats://${LOCAL_HOST}:${LOCAL_PORT}`], how: `the server already listening on ${LOCAL_HOST}:${LOCAL_PORT}` };
  }
  const binary = probes.findBinary();
  if (!binary) {
    throw new Error(
      [
        'Chorus needs NATS with JetStream, and found none:',
        '  - NATS_URL is not set,',
        `  - nothing listens on ${LOCAL_HOST}:${LOCAL_PORT},`,
        '  - no nats-server on PATH.',
        'Either install nats-server (Debian/Ubuntu: sudo apt-get install nats-server;',
        'elsewhere: https://github.com/nats-io/nats-server/releases) and run npm start again,',
        'or point NATS_URL at a server started with JetStream (nats-server -js).',
      ].join('\n'),
    );
  }
  const dir = join(config.dataDir, 'nats');
  const server = await probes.start({
    binary,
    dir,
    host: LOCAL_HOST,
    port: LOCAL_PORT,
    logFile: join(dir, 'nats-server.log'),
  });
  return { servers: [server.url], how: `${binary} started by Chorus (data in ${dir})`, server };
}
