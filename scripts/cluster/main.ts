import { join, resolve } from 'node:path';
import { startDeployment, startNatsCluster } from './cluster.launcher';

/**
 * `npm run start:cluster`: Chorus scaled out on one machine without Docker — a three-node NATS
 * cluster (streams and buckets with three replicas) and one process per app, two replicas of each
 * agent. Data under .chorus/cluster; Ctrl-C stops everything.
 */
async function main(): Promise<void> {
  const root = resolve(__dirname, '..', '..', '..');
  const replicas = Number(process.env.CHORUS_CLUSTER_REPLICAS ?? 2);
  const cluster = await startNatsCluster(join(root, '.chorus', 'cluster'));
  console.log(`NATS cluster: ${cluster.urls.join(', ')}`);
  const deployment = await startDeployment(root, cluster.urls, {
    replicas,
    env: { CHORUS_REPLICAS: '3', CHORUS_HTTP_PORT: process.env.CHORUS_HTTP_PORT ?? '3000', CHORUS_LOG_LEVEL: process.env.CHORUS_LOG_LEVEL ?? 'info' },
  }).catch(async (e) => {
    await cluster.stop();
    throw e;
  });
  console.log(`Chorus ingress listening on ${deployment.url}`);
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
