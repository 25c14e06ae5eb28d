import type { WorkflowSummary } from '@chorus/envelope';
import { RecentIndex } from './recent.index';

const row = (id: string, status: WorkflowSummary['status'] = 'completed', startedSecond = 0): WorkflowSummary =>
  ({ correlation_id: id, tenant_id: 'default', status, started_at: `2026-11-30T00:00:${String(startedSecond).padStart(2, '0')}.000Z` }) as WorkflowSummary;
const ids = (index: RecentIndex) => [...index.values()].map((r) => r.correlation_id);

describe('RecentIndex', () => {
  it('RecentIndex - evicts the oldest row past its capacity and is no longer complete', () => {
    const index = new RecentIndex(2);
    for (const id of ['a', 'b', 'c']) index.upsert(row(id));
    expect(ids(index)).toEqual(['b', 'c']);
    expect(index.complete).toBe(false);
  });

  it('RecentIndex.tenantOf - the tenant of a correlation id it holds, forgotten with its row', () => {
    const index = new RecentIndex(2);
    index.upsert({ ...row('a'), tenant_id: 'acme' });
    index.upsert({ ...row('b'), tenant_id: 'globex' });
    expect([index.tenantOf('a'), index.tenantOf('b'), index.tenantOf('c')]).toEqual(['acme', 'globex', undefined]);
    index.upsert(row('c'));
    expect([index.tenantOf('a'), index.tenantOf('c')]).toEqual([undefined, 'default']);
    index.backfill([{ ...row('old', 'completed', 0), tenant_id: 'initech' }], true);
    expect([index.tenantOf('old'), index.tenantOf('b'), index.tenantOf('c')]).toEqual([undefined, 'globex', 'default']);
    index.clear();
    expect(index.tenantOf('b')).toBeUndefined();
  });

  it('RecentIndex.backfill - older rows go behind the newer ones, and the index is complete once they reach the ledger start', () => {
    const index = new RecentIndex(5);
    index.upsert(row('c', 'running'));
    index.upsert(row('d'));
    index.markPartial();
    expect(index.complete).toBe(false);
    expect(index.room).toBe(3);
    // `c` is also among the older rows, in an earlier state: the index keeps its own, newer one.
    index.backfill([row('a'), row('b'), row('c')], true);
    expect(ids(index)).toEqual(['a', 'b', 'c', 'd']);
    expect([...index.values()].find((r) => r.correlation_id === 'c')!.status).toBe('running');
    expect(index.complete).toBe(true);
    // The oldest go first when new rows arrive.
    index.upsert(row('e'));
    index.upsert(row('f'));
    expect(ids(index)).toEqual(['b', 'c', 'd', 'e', 'f']);
    expect(index.complete).toBe(false);
  });

  it('RecentIndex.backfill - orders by start, not by last write: a workflow that started later goes after one that finished later', () => {
    const index = new RecentIndex(3);
    index.upsert(row('long-runner', 'completed', 10)); // started at 10 s, last written in the takeover window
    index.markPartial();
    // Older rows come in the order of their last write: `b` (started at 12 s) finished before `a` (started at 11 s).
    index.backfill([row('c', 'completed', 5), row('b', 'completed', 12), row('a', 'completed', 11)], true);
    expect(ids(index)).toEqual(['long-runner', 'a', 'b']);
    expect(index.complete).toBe(false);
  });

  it('RecentIndex.backfill - more older rows than room keeps the newest of them; short of the ledger start it stays incomplete', () => {
    const full = new RecentIndex(3);
    full.upsert(row('z'));
    full.markPartial();
    full.backfill([row('w'), row('x'), row('y')], true);
    expect(ids(full)).toEqual(['x', 'y', 'z']);
    expect(full.complete).toBe(false);

    const short = new RecentIndex(10);
    short.upsert(row('z'));
    short.markPartial();
    short.backfill([row('y')], false);
    expect(ids(short)).toEqual(['y', 'z']);
    expect(short.complete).toBe(false);
  });
});
