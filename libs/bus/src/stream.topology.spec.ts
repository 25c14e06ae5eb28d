import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { ensureStream } from './stream.topology';

/** A stream manager that holds one stream, as `jsm.streams` would. */
function managerWith(existing: Partial<StreamConfig>, cluster: string | undefined, update: (name: string, c: Partial<StreamConfig>) => Promise<unknown> = async () => ({})) {
  const updates: Array<Partial<StreamConfig>> = [];
  const jsm = {
    streams: {
      info: async () => ({ config: existing, ...(cluster ? { cluster: { name: cluster } } : {}) }),
      update: async (name: string, c: Partial<StreamConfig>) => {
        updates.push(c);
        return update(name, c);
      },
      add: async () => {
        throw new Error('the stream exists');
      },
    },
  } as unknown as JetStreamManager;
  return { jsm, updates };
}

const spec = { name: 'CHORUS_WF', subjects: ['chorus.wf.>'], duplicate_window: 120e9, max_age: 604800e9 };
const existing = { ...spec, max_bytes: -1, num_replicas: 1 };

describe('ensureStream', () => {
  it('ensureStream - brings an existing stream to the replica count asked for (CHORUS_REPLICAS)', async () => {
    // A deployment that moved to a cluster and set CHORUS_REPLICAS=3 kept its streams on one replica, silently.
    const { jsm, updates } = managerWith(existing, 'c1');
    await ensureStream(jsm, { manageTopology: true, replicas: 3 }, spec);
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ name: 'CHORUS_WF', num_replicas: 3, max_age: spec.max_age, duplicate_window: spec.duplicate_window });
  });

  it('ensureStream - leaves a stream that is as asked for alone', async () => {
    const { jsm, updates } = managerWith(existing, undefined);
    await ensureStream(jsm, { manageTopology: true, replicas: 1 }, spec);
    expect(updates).toHaveLength(0);
  });

  it('ensureStream - never takes replicas away (a process started without CHORUS_REPLICAS must not)', async () => {
    const { jsm, updates } = managerWith({ ...existing, num_replicas: 3 }, 'c1');
    await ensureStream(jsm, { manageTopology: true, replicas: 1 }, { ...spec, max_age: 3600e9 });
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ num_replicas: 3, max_age: 3600e9 });
  });

  it('ensureStream - more than one replica on a server not in a cluster is refused before anything is asked', async () => {
    // nats-server 2.9 stores such an update, then cannot load the stream when it restarts.
    const { jsm, updates } = managerWith(existing, undefined);
    await expect(ensureStream(jsm, { manageTopology: true, replicas: 3 }, spec)).rejects.toThrow(
      'stream CHORUS_WF has 1 replica(s), and CHORUS_REPLICAS asks for 3, but this NATS server is not in a cluster',
    );
    expect(updates).toHaveLength(0);
  });

  it('ensureStream - a replica count the server refuses is named by its setting', async () => {
    const { jsm } = managerWith(existing, 'c1', async () => {
      throw new Error('replicas > 1 not supported in non-clustered mode');
    });
    await expect(ensureStream(jsm, { manageTopology: true, replicas: 3 }, spec)).rejects.toThrow(
      /stream CHORUS_WF has 1 replica\(s\), and CHORUS_REPLICAS asks for 3: the server refused the change \(replicas > 1 not supported in non-clustered mode\)/,
    );
  });
});
