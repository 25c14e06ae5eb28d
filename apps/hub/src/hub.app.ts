import { createJsonConsumer, startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import { HUB_AGENT } from '@chorus/correlation';
import { DUPLICATE_PREFIX, type DuplicateNotice } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { HubModule } from './hub.module';
import { HubQueries } from './hub.queries';
import { HubService } from './hub.service';
import { LedgerStore } from './ledger.store';

/**
 * The correlation hub: consumes every workflow envelope (durable consumer `hub_all`) and the
 * duplicate notices, keeps the ledger, sweeps deadlines and answers status/history/list/stats.
 */
export async function startHub(bus: Bus, config: ChorusConfig, parentLog: Logger): Promise<Component> {
  const log = parentLog.child({ agent: HUB_AGENT });
  const ledger = await LedgerStore.open(bus, config.hub.bucket, config.hub.retentionMs, config.hub.cacheSize);
  const hub = new HubService(bus, ledger, log, config.hub.sweepIntervalMs);
  await hub.start();
  const responders = new HubQueries(bus, hub, ledger, log).serve();
  const duplicates = createJsonConsumer<DuplicateNotice>(
    bus,
    {
      stream: config.bus.duplicateStream,
      durable: 'hub_duplicates',
      filter: `${DUPLICATE_PREFIX}.>`,
      ackWaitMs: config.consumer.ackWaitMs,
      maxDeliver: config.consumer.maxDeliver,
      concurrency: 16,
    },
    (notice) => hub.onDroppedDuplicate(notice),
    log,
  );
  await duplicates.start();
  const agent = await startAgent(HUB_AGENT, HubModule.register(hub), {
    bus,
    consumer: { ...config.consumer, agent: HUB_AGENT, skipExpired: false },
    log,
  });
  return {
    name: HUB_AGENT,
    close: async () => {
      await agent.close();
      await duplicates.stop();
      await Promise.all(responders.map((r) => r.stop()));
      hub.stop();
    },
  };
}
