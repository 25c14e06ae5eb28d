import { createHeaders, startProfileService } from '@chorus/bus';
import { createRootLogger } from '@chorus/observability';
import { ChaosDriver, type ChaosResult } from './chaos.driver';
import { scenarioDir, spawnApp, startAllInOne, startDeployment, startNatsCluster, startSingleNats, waitForOutput } from './chaos.systems';

export interface ScenarioOptions {
  /** Fewer workflows, for CI and the jest suites. */
  quick: boolean;
  /** Workflows to send, overriding the scenario's own count. */
  count?: number;
  /** The project root (dist/ must be built). */
  root: string;
  /** Where scenarios keep their servers' data. */
  workDir: string;
}

type Scenario = (o: ScenarioOptions) => Promise<ChaosResult>;

// Deadlines long enough to ride out a failover on a loaded two-core machine; a timeout here would
// measure the machine, not whether anything was lost.
const load = (o: ScenarioOptions) => ({ count: o.count ?? (o.quick ? 60 : 400), concurrency: o.quick ? 8 : 16, deadlineMs: 30_000 });
/** Runs `fault` once, when `fraction` of the workflows have been submitted. */
const at = (fraction: number, total: number, fault: () => Promise<void>) => {
  let fired = false;
  return async (submitted: number) => {
    if (!fired && submitted >= total * fraction) {
      fired = true;
      await fault();
    }
  };
};

/** kill -9 one of two replicas of every agent (and of the hub, and of the profiles) under load. */
const killReplicas: Scenario = async (o) => {
  const nats = await startSingleNats(scenarioDir(o.workDir, 'kill-replicas'));
  const deployment = await startDeployment(o.root, nats.urls, { replicas: 2 });
  const driver = await ChaosDriver.connect(nats.urls);
  try {
    const { count, concurrency, deadlineMs } = load(o);
    const victims = deployment.apps.filter((a) => a.replica === 1 && a.app !== 'ingress');
    const sent = await driver.submit(count, {
      concurrency,
      deadlineMs,
      onProgress: at(0.3, count, async () => void (await Promise.all(victims.map((v) => v.stop('SIGKILL'))))),
    });
    return await driver.verify('kill -9 one of two replicas of each agent', sent, deadlineMs + 15_000, `killed: ${victims.map((v) => v.app).join(', ')}`);
  } finally {
    await driver.close();
    await deployment.stop();
    await nats.stop();
  }
};

/** Stop nats-server (its file store kept) and start it again, under load. */
const restartNats: Scenario = async (o) => {
  const nats = await startSingleNats(scenarioDir(o.workDir, 'restart-nats'));
  const chorus = await startAllInOne(o.root, nats.urls);
  const driver = await ChaosDriver.connect(nats.urls);
  try {
    const { count, concurrency, deadlineMs } = load(o);
    const sent = await driver.submit(count, {
      concurrency,
      deadlineMs,
      onProgress: at(0.3, count, async () => {
        await nats.stop();
        await new Promise((r) => setTimeout(r, 1000));
        await nats.restart();
      }),
    });
    return await driver.verify('restart nats-server (file store) under load', sent, deadlineMs + 15_000, 'down ~1 s');
  } finally {
    await driver.close();
    await chorus.stop();
    await nats.stop();
  }
};

/** A three-node cluster, streams and buckets with three replicas, loses one node under load. */
const clusterNodeLoss: Scenario = async (o) => {
  const cluster = await startNatsCluster(scenarioDir(o.workDir, 'cluster-node-loss'));
  const chorus = await startAllInOne(o.root, cluster.urls, { CHORUS_REPLICAS: '3' });
  const driver = await ChaosDriver.connect(cluster.urls);
  try {
    const { count, concurrency, deadlineMs } = load(o);
    const sent = await driver.submit(count, { concurrency, deadlineMs, onProgress: at(0.3, count, () => cluster.nodes[1].stop('SIGKILL')) });
    return await driver.verify('3-node cluster loses a node (R3)', sent, deadlineMs + 15_000, 'node 2 killed with SIGKILL');
  } finally {
    await driver.close();
    await chorus.stop();
    await cluster.stop();
  }
};

/** kill -9 the hub and start it again, under load. */
const restartHub: Scenario = async (o) => {
  const nats = await startSingleNats(scenarioDir(o.workDir, 'restart-hub'));
  const deployment = await startDeployment(o.root, nats.urls, { replicas: 1 });
  const driver = await ChaosDriver.connect(nats.urls);
  try {
    const { count, concurrency, deadlineMs } = load(o);
    const env = { NATS_URL: nats.urls.join(','), CHORUS_LOG_LEVEL: 'info' };
    const sent = await driver.submit(count, {
      concurrency,
      deadlineMs,
      onProgress: at(0.3, count, async () => {
        await deployment.apps.find((a) => a.app === 'hub')!.stop('SIGKILL');
        await new Promise((r) => setTimeout(r, 1000));
        const hub = spawnApp(o.root, 'hub', 2, env);
        deployment.apps.push(hub);
        await waitForOutput(hub, /hub ready/);
      }),
    });
    return await driver.verify('kill and restart the hub', sent, deadlineMs + 15_000, 'hub down ~1 s');
  } finally {
    await driver.close();
    await deployment.stop();
    await nats.stop();
  }
};

/**
 * Every envelope published three times: each one the stream stores is published again with its
 * Nats-Msg-Id (a retry inside the duplicate window, which the stream drops) and again without one
 * (a retry after the window, or a client that sets none: stored, so the hub and the agents see it).
 */
const duplicateStorm: Scenario = async (o) => {
  const nats = await startSingleNats(scenarioDir(o.workDir, 'duplicate-storm'));
  const chorus = await startAllInOne(o.root, nats.urls);
  const driver = await ChaosDriver.connect(nats.urls);
  const tap = await ChaosDriver.connect(nats.urls);
  let copies = 0;
  // Read what the stream stored (not what was published: a dropped publish is not an envelope).
  const reader = await (await tap.bus.js.consumers.get('CHORUS_WF', { filter_subjects: 'chorus.wf.>' })).consume();
  void (async () => {
    for await (const m of reader) {
      if (m.headers?.get('Chorus-Chaos-Copy')) continue;
      const original = [...(m.headers ?? [])].map(([k, v]) => [k, v[0]] as [string, string]);
      const msgId = m.headers?.get('Nats-Msg-Id') || undefined;
      copies += 2;
      await tap.bus.js.publish(m.subject, m.data, { headers: createHeaders([...original, ['Chorus-Chaos-Copy', '1']]), msgID: msgId }).catch(() => undefined);
      await tap.bus.js.publish(m.subject, m.data, { headers: createHeaders([...original.filter(([k]) => k !== 'Nats-Msg-Id'), ['Chorus-Chaos-Copy', '2']]) }).catch(() => undefined);
    }
  })();
  try {
    const { count, concurrency, deadlineMs } = load(o);
    const sent = await driver.submit(count, { concurrency, deadlineMs });
    const result = await driver.verify('duplicate storm (every envelope ×3)', sent, deadlineMs + 15_000);
    const stats = await driver.client.stats<{ totals: { duplicates_dropped: number } }>();
    return { ...result, notes: `${copies} copies published; hub dropped ${stats.totals.duplicates_dropped} duplicates` };
  } finally {
    await reader.close();
    await tap.close();
    await driver.close();
    await chorus.stop();
    await nats.stop();
  }
};

/** A profile that accepts requests and never answers: every workflow loses that lens, in time. */
const hangingProfile: Scenario = async (o) => {
  const nats = await startSingleNats(scenarioDir(o.workDir, 'hanging-profile'));
  const chorus = await startAllInOne(o.root, nats.urls);
  const driver = await ChaosDriver.connect(nats.urls);
  const stuck = await startProfileService(
    driver.bus,
    {
      name: 'stuck',
      version: '0.0.1',
      description: 'a profile whose backend hangs',
      metadata: {},
      search: () => new Promise(() => undefined),
      documents: () => new Promise(() => undefined),
    },
    createRootLogger({ name: 'stuck', level: 'silent' }),
  );
  try {
    const count = o.count ?? (o.quick ? 20 : 100);
    const sent = await driver.submit(count, { concurrency: count, deadlineMs: 6000 });
    const result = await driver.verify('hanging profile', sent, 20_000);
    return { ...result, notes: `${result.degraded}/${result.sent} completed without the stuck lens` };
  } finally {
    await stuck.stop();
    await driver.close();
    await chorus.stop();
    await nats.stop();
  }
};

/** Consumers allowed two unacknowledged deliveries: the server holds the rest back, nothing is lost. */
const slowConsumer: Scenario = async (o) => {
  const nats = await startSingleNats(scenarioDir(o.workDir, 'slow-consumer'));
  const chorus = await startAllInOne(o.root, nats.urls, { CHORUS_MAX_ACK_PENDING: '2' });
  const driver = await ChaosDriver.connect(nats.urls);
  try {
    const count = o.count ?? (o.quick ? 100 : 400);
    let maxInFlight = 0;
    const probe = setInterval(() => {
      void driver.bus.jsm.consumers
        .info('CHORUS_WF', 'hub_all')
        .then((i) => (maxInFlight = Math.max(maxInFlight, i.num_ack_pending)))
        .catch(() => undefined);
    }, 20);
    const sent = await driver.submit(count, { concurrency: 64, deadlineMs: 30_000 });
    const result = await driver.verify('slow consumer (max_ack_pending reached)', sent, 45_000);
    clearInterval(probe);
    return { ...result, notes: `max_ack_pending 2; hub_all in flight peaked at ${maxInFlight}` };
  } finally {
    await driver.close();
    await chorus.stop();
    await nats.stop();
  }
};

export const SCENARIOS: Record<string, Scenario> = {
  'kill-replicas': killReplicas,
  'restart-nats': restartNats,
  'cluster-node-loss': clusterNodeLoss,
  'restart-hub': restartHub,
  'duplicate-storm': duplicateStorm,
  'hanging-profile': hangingProfile,
  'slow-consumer': slowConsumer,
};
