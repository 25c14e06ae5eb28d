import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import type { BusOptions } from './bus.options';
import { isStorageExhausted } from './transient-error';

/** A stream as Chorus keeps it: its subjects and limits, and the setting its byte limit comes from. */
export type StreamSpec = Pick<StreamConfig, 'name' | 'subjects' | 'duplicate_window' | 'max_age'> & { max_bytes?: number; maxBytesSetting?: string };

/**
 * Creates a file-backed stream with the bus's replica count, or brings its limits up to date: the
 * duplicate window, the age limit, and the byte limit when one is given. Without one, a new
 * stream gets none and an existing one keeps its limit (what an operator set with
 * `nats stream edit` stays). JetStream sets a stream's byte limit aside on its disk (on every
 * replica) when the stream is created or updated: a limit the server cannot set aside fails, naming
 * the stream and the setting.
 */
export async function ensureStream(jsm: JetStreamManager, options: Pick<BusOptions, 'manageTopology' | 'replicas'>, spec: StreamSpec): Promise<void> {
  const { maxBytesSetting, ...config } = spec;
  try {
    await createOrUpdate(jsm, options, config);
  } catch (e) {
    // The server's own words ("insufficient storage resources available") name neither the stream
    // nor the setting that asked for the room.
    if (!isStorageExhausted(e) || config.max_bytes === undefined) throw e;
    throw new Error(
      `stream ${config.name}: JetStream cannot set aside its byte limit, ${config.max_bytes} bytes (${(e as Error).message}): lower it${maxBytesSetting ? ` (${maxBytesSetting})` : ''}, or give the server more room (max_file_store)`,
      { cause: e },
    );
  }
}

async function createOrUpdate(jsm: JetStreamManager, options: Pick<BusOptions, 'manageTopology' | 'replicas'>, config: Omit<StreamSpec, 'maxBytesSetting'>): Promise<void> {
  if (!options.manageTopology) {
    try {
      await jsm.streams.info(config.name);
      return;
    } catch (e) {
      if (!isNotFound(e)) throw e;
      throw new Error(`stream ${config.name} does not exist and this service may not create it: start the hub first (it creates the streams)`);
    }
  }
  const full: Partial<StreamConfig> & { name: string } = {
    ...config,
    max_bytes: config.max_bytes ?? -1,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: options.replicas,
    allow_direct: true,
  };
  try {
    const info = await jsm.streams.info(config.name);
    const c = info.config;
    const maxBytes = config.max_bytes ?? c.max_bytes;
    // The replica count too: a deployment that moved to a cluster and set CHORUS_REPLICAS=3 kept
    // every stream it had on one replica, and said nothing (losing that node lost them).
    // Only up: a process started without the setting (1 by default) must not take the copies away.
    const replicas = Math.max(c.num_replicas, options.replicas);
    if (c.num_replicas !== replicas) refuseUnclustered(config.name, c.num_replicas, replicas, info.cluster?.name);
    if (c.duplicate_window !== full.duplicate_window || c.max_age !== full.max_age || c.max_bytes !== maxBytes || c.num_replicas !== replicas) {
      await jsm.streams.update(config.name, { ...c, duplicate_window: full.duplicate_window, max_age: full.max_age, max_bytes: maxBytes, num_replicas: replicas }).catch((e: unknown) => {
        throw replicasError(config.name, c.num_replicas, options.replicas, e);
      });
    }
  } catch (e) {
    if (!isNotFound(e)) throw e;
    try {
      await jsm.streams.add(full);
    } catch (addError) {
      // Another process created it between our look-up and our add.
      if (/already in use/i.test(String((addError as Error).message))) return;
      if (/subjects overlap/i.test(String((addError as Error).message))) throw await overlapError(jsm, config, addError);
      throw addError;
    }
  }
}

/**
 * The server says only "subjects overlap with an existing stream": which stream holds them, and
 * that a stream was renamed (CHORUS_WORKFLOW_STREAM and the like) on a server that has the old one.
 */
async function overlapError(jsm: JetStreamManager, config: Omit<StreamSpec, 'maxBytesSetting'>, cause: unknown): Promise<Error> {
  const holder = await jsm.streams.find(config.subjects?.[0] ?? '').catch(() => undefined);
  const subjects = (config.subjects ?? []).join(', ');
  return new Error(
    `stream ${config.name} cannot be created: its subjects (${subjects}) belong to ${holder ? `stream ${holder}` : 'another stream'} on this server. ` +
      `Every app of a deployment must use the same stream names (CHORUS_WORKFLOW_STREAM, CHORUS_DEAD_LETTER_STREAM, CHORUS_DUPLICATE_STREAM)${holder ? `; to rename one, delete stream ${holder} first (nats stream rm ${holder}), losing what it holds` : ''}`,
    { cause },
  );
}

/**
 * nats-server 2.9 takes a replica count above 1 in the update of a stream on a server that is not
 * in a cluster, and then cannot load that stream when it restarts ("replicas > 1 not supported in
 * non-clustered mode"): every stream so updated was gone. Refused here, before anything is asked.
 */
export function refuseUnclustered(name: string, had: number, wanted: number, cluster: string | undefined): void {
  if (wanted > 1 && !cluster) {
    throw new Error(`stream ${name} has ${had} replica(s), and CHORUS_REPLICAS asks for ${wanted}, but this NATS server is not in a cluster: set CHORUS_REPLICAS to 1 (or leave it unset), or run a NATS cluster of at least ${wanted} servers`);
  }
}

/** A replica count the server cannot give (one server, or fewer nodes than asked for), named by its setting. */
export function replicasError(name: string, had: number, wanted: number, e: unknown): unknown {
  if (had === wanted || !/replica|cluster|peers/i.test(String((e as Error)?.message ?? e))) return e;
  return new Error(`stream ${name} has ${had} replica(s), and CHORUS_REPLICAS asks for ${wanted}: the server refused the change (${(e as Error).message}); set CHORUS_REPLICAS to what the NATS deployment can hold (1 for a single server)`, { cause: e });
}

function isNotFound(e: unknown): boolean {
  return /not found/i.test(String((e as Error)?.message ?? e));
}
