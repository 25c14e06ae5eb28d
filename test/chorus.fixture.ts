import { parseChorusConfig, type ChorusConfig } from '@chorus/config';
import type { DestinationStream } from 'pino';
import { createRootLogger, type Logger } from '@chorus/observability';
import { startNats, type NatsHandle, type StartNatsOptions } from '@chorus/testing';
import { startChorus, type ChorusApp, type RunningChorus } from '../apps/chorus/src/chorus';

/** Closes one running app of the fixture (to stop a responder, the profiles, …). */
export async function stopApp(f: ChorusFixture, name: string): Promise<void> {
  const i = f.chorus.components.findIndex((c) => c.name === name || c.name.startsWith(`${name}(`));
  if (i < 0) throw new Error(`no running app ${name}`);
  const [component] = f.chorus.components.splice(i, 1);
  await component.close();
}

export interface ChorusFixture {
  nats: NatsHandle;
  chorus: RunningChorus;
  config: ChorusConfig;
  log: Logger;
  /** The ingress base URL. */
  url: string;
  stop(): Promise<void>;
}

/**
 * A whole Chorus (every app, one process) on a nats-server of the suite's own, with the ingress on
 * a free port. `env` overrides configuration variables.
 */
export async function startChorusFixture(
  env: Record<string, string> = {},
  natsOptions: StartNatsOptions = {},
  apps?: readonly ChorusApp[],
  /** Where the log lines go (a LogCapture to read them); nowhere at the default `silent` level. */
  logs?: DestinationStream,
): Promise<ChorusFixture> {
  const nats = await startNats(natsOptions);
  const config = parseChorusConfig(
    { CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: process.env.CHORUS_TEST_LOG_LEVEL ?? 'silent', ...env, NATS_URL: nats.url },
    process.cwd(),
  );
  const log = createRootLogger({ name: 'test', level: config.logLevel, destination: logs });
  const chorus = await startChorus(config, log, { exitOnSignal: false, apps });
  if (chorus.failed.length > 0 || (!chorus.url && (!apps || apps.includes('ingress')))) {
    await chorus.shutdown('start failed');
    await nats.stop();
    throw new Error(`Chorus failed to start: ${chorus.failed.map((f) => `${f.name}: ${String(f.error)}`).join('; ')}`);
  }
  return {
    nats,
    chorus,
    config,
    log,
    url: chorus.url ?? '',
    stop: async () => {
      await chorus.shutdown('test done');
      await nats.stop();
    },
  };
}

/** POST a JSON body; returns status and parsed body. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
