import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDeployment, startNatsCluster, type ChorusDeployment, type NatsCluster } from '../scripts/cluster/cluster.launcher';
import { waitFor } from '@chorus/testing';
import { getJson, postJson } from './chorus.fixture';

/**
 * Scale-out as `npm run start:cluster` runs it: a three-node NATS cluster with streams and buckets
 * replicated three times, one process per app, two replicas of each agent.
 */
describe('cluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chorus-cluster-test-'));
  let cluster: NatsCluster;
  let deployment: ChorusDeployment;

  beforeAll(async () => {
    cluster = await startNatsCluster(dir);
    deployment = await startDeployment(join(__dirname, '..'), cluster.urls, { replicas: 2, env: { CHORUS_REPLICAS: '3' } });
  }, 180_000);
  afterAll(async () => {
    await deployment?.stop();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the apps logged at warn level or above (the last lines), to tell why something failed. */
  const problems = (level = 40) =>
    deployment.apps
      .flatMap((a) => a.output().split('\n').filter((l) => Number(/"level":(\d+)/.exec(l)?.[1] ?? 0) >= level).map((l) => `${a.app}#${a.replica} ${l}`))
      .slice(-30)
      .join('\n');

  const ask = async (n: number) => {
    const results = await Promise.all(Array.from({ length: n }, (_, i) => postJson(`${deployment.url}/v1/queries?wait=true`, { query: `how does the hub keep its ledger ${i}`, deadline_ms: 30_000 })));
    // A failed request shows its HTTP status and error, not just `undefined`.
    return results.map((r) => (r.body.status as string | undefined) ?? `HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  };

  it('cluster - every app replicated, streams on three replicas, queries complete', async () => {
    expect(deployment.apps.filter((a) => a.app === 'search')).toHaveLength(2);
    expect(await ask(20)).toEqual(Array(20).fill('completed'));
  }, 120_000);

  it('cluster - losing one NATS node, queries still complete', async () => {
    await cluster.nodes[2].stop('SIGKILL');
    const statuses = await ask(20);
    if (statuses.some((s) => s !== 'completed')) console.error(problems(50));
    expect(statuses).toEqual(Array(20).fill('completed'));
  }, 120_000);

  it('cluster - with one NATS node lost, every status and history read answers (a read\'s consumer can be placed on the lost node)', async () => {
    await cluster.nodes[2].stop('SIGKILL'); // (lost already when the test before it ran)
    const ids = (await Promise.all(Array.from({ length: 10 }, (_, i) => postJson(`${deployment.url}/v1/queries?wait=true`, { query: `what does the hub keep ${i}`, deadline_ms: 30_000 })))).map((r) => r.body.correlation_id as string);
    const reads = await Promise.all(ids.flatMap((id) => [getJson(`${deployment.url}/v1/workflows/${id}`), getJson(`${deployment.url}/v1/workflows/${id}/history`)]));
    // A failed read shows its status and error, not just its status, and what the apps logged.
    if (reads.some((r) => r.status !== 200)) console.error(problems());
    expect(reads.map((r) => (r.status === 200 ? 200 : `HTTP ${r.status}: ${JSON.stringify(r.body)}`))).toEqual(Array(20).fill(200));
  }, 120_000);

  it('cluster - with two of three NATS nodes lost (no quorum), /ready says so; with one back, it is ready again', async () => {
    await cluster.nodes[2].stop('SIGKILL'); // (lost already when the tests before it ran)
    await cluster.nodes[1].stop('SIGKILL');
    const ready = async () => (await getJson(`${deployment.url}/ready`)).status;
    // Once the apps have moved to the one server left (a 503 while reconnecting says nothing about
    // the quorum): that server has a copy of the stream and still answered its info, and /ready
    // said 200 while nothing could be stored.
    await new Promise((r) => setTimeout(r, 12_000));
    const answers: number[] = [];
    for (let i = 0; i < 5; i++, await new Promise((r) => setTimeout(r, 1000))) answers.push(await ready());
    expect(answers).toEqual(Array(5).fill(503));
    await cluster.restart(1);
    await waitFor(async () => ((await ready()) === 200 ? true : undefined), { what: '/ready 200 with a quorum again', timeoutMs: 60_000, intervalMs: 500 });
  }, 120_000);
});
