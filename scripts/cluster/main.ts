import { join, resolve } from 'node:path';
import { startDeployment, startNatsCluster } from './cluster.launcher';

/**
 * `npm run start:cluster`: Chorus scaled out on one machine without Docker — a three-node NATS
 * cluster (streams and buckets with three replicas) and one process per app, two replicas of each
 * agent. Data under .chorus/cluster; Ctrl-C stops everything.
 */
const USAGE = `npm run start:cluster
  A three-node NATS cluster on free loopback ports (data and server logs under .chorus/cluster/nN)
  and Chorus as one process per app, each agent replicated; every app's output goes to
  .chorus/cluster/logs/<app>-<replica>.log. Ctrl-C stops everything. No options; settings:
  CHORUS_HTTP_PORT      the ingress's port (default 3000)
  CHORUS_CLUSTER_REPLICAS  replicas of each agent and of the hub (default 2)
  CHORUS_LOG_LEVEL      the apps' log level (default info)`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) return void console.log(USAGE);
  if (args.length > 0) {
    console.error(`unknown argument(s): ${args.join(' ')}\n${USAGE}`);
    process.exit(2);
  }
  const root = resolve(__dirname, '..', '..', '..');
  const replicas = Number(process.env.CHORUS_CLUSTER_REPLICAS ?? 2);
  const cluster = await startNatsCluster(join(root, '.chorus', 'cluster'));
  console.log(`NATS cluster: ${cluster.urls.join(', ')}`);
  const logDir = join(root, '.chorus', 'cluster', 'logs');
  const deployment = await startDeployment(root, cluster.urls, {
    replicas,
    logDir,
    env: { CHORUS_REPLICAS: '3', CHORUS_HTTP_PORT: process.env.CHORUS_HTTP_PORT ?? '3000', CHORUS_LOG_LEVEL: process.env.CHORUS_LOG_LEVEL ?? 'info' },
  }).catch(async (e) => {
    await cluster.stop();
    throw e;
  });
  console.log(`Chorus ingress listening on ${deployment.url}; app logs in ${logDir}`);
  console.log(`Chorus cluster ready: ${deployment.apps.map((a) => `${a.app}#${a.replica} (pid ${a.child.pid})`).join(', ')}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await deployment.stop();
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
