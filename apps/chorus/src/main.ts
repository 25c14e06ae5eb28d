import { parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { startChorus } from './chorus';
import { resolveNats } from './nats.resolver';

/** `npm start`: every Chorus app in one process. */
async function main(): Promise<void> {
  const config = parseChorusConfig(process.env, process.cwd());
  const log = createRootLogger({ name: 'chorus', level: config.logLevel });
  const nats = await resolveNats(config);
  // The nats-server we started, if any, stops after everything else has drained.
  const chorus = await startChorus({ ...config, bus: { ...config.bus, servers: nats.servers } }, log, {
    afterShutdown: async () => nats.server?.stop(),
  });
  console.log(`Chorus NATS: ${nats.how}`);
  if (chorus.url) console.log(`Chorus ingress listening on ${chorus.url}`);
  const names = chorus.components.map((c) => c.name).join(', ');
  if (chorus.failed.length > 0) {
    const failures = chorus.failed.map((f) => `${f.name}: ${(f.error as Error).message}`).join('; ');
    if (chorus.components.length === 0) {
      // Nothing to run: stop (and stop the nats-server started for us) instead of idling.
      console.error(`Chorus did not start: every app failed: ${failures}`);
      await chorus.shutdown('no app started');
      process.exit(1);
    }
    // The others keep running (one broken app must not take the rest down), but say so loudly.
    console.error(`Chorus running DEGRADED: ${names} started; failed: ${failures}`);
    process.exitCode = 1;
    return;
  }
  console.log(`Chorus ready: ${names}`);
}

main().catch((e) => {
  console.error(`Chorus did not start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
