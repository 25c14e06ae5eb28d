import { TaskState } from '@a2a-js/sdk';
import { createRootLogger } from '@chorus/observability';
import type { ChorusClient } from '@chorus/bus';
import { ChorusTaskStore } from './chorus.task-store';
import type { Task } from './a2a.mapping';

const log = createRootLogger({ name: 'test', level: 'silent' });

/** A finished task of about `chars` characters of JSON, as the executor saves it (its answer in the history). */
function task(i: number, chars: number): Task {
  const id = `01a2362a-4ad5-717d-92ee-${String(i).padStart(12, '0')}`;
  return { id, contextId: id, status: { state: TaskState.TASK_STATE_COMPLETED }, history: [{ messageId: `m${i}`, role: 2, parts: [{ text: 'x'.repeat(chars) }] }], artifacts: [] } as unknown as Task;
}

describe('ChorusTaskStore', () => {
  it('ChorusTaskStore - keeps its snapshots under a size bound, oldest out first, and reads an evicted task from its workflow (10,000 finished tasks took up to 600 MB; found by the soak exploration)', async () => {
    const asked: string[] = [];
    const client = { workflow: async (id: string) => (asked.push(id), null) } as unknown as ChorusClient;
    const store = new ChorusTaskStore(client, log, 100_000);
    for (let i = 0; i < 200; i++) await store.save(task(i, 2_000));
    const kept = store.kept;
    expect(kept.chars).toBeLessThanOrEqual(100_000);
    expect(kept.tasks).toBeGreaterThan(40);
    expect(kept.tasks).toBeLessThan(50);
    // The newest is a snapshot (the ledger is not asked); the oldest was evicted and is read from its workflow.
    expect((await store.load(task(199, 0).id))?.history?.[0]).toEqual(expect.objectContaining({ messageId: 'm199' }));
    expect(await store.load(task(0, 0).id)).toBeUndefined();
    expect(asked).toEqual([task(0, 0).id]);
    // Saved again (its next update), a task counts once.
    await store.save(task(199, 2_000));
    expect(store.kept).toEqual(kept);
  });

  it('ChorusTaskStore - a task marked unconfirmed after its snapshot was evicted leaves nothing behind (its key stayed for good; found by review)', async () => {
    const client = { workflow: async () => null } as unknown as ChorusClient;
    const store = new ChorusTaskStore(client, log, 10_000);
    for (let i = 0; i < 20; i++) await store.save(task(i, 2_000));
    store.markUnconfirmed(task(0, 0).id, 'default');
    store.markUnconfirmed(task(19, 0).id, 'default');
    expect((store as unknown as { unconfirmed: Set<string> }).unconfirmed.size).toBe(1);
  });
});
