import type { WorkflowDriver } from './load';

/** The systems `npm run bench` compares, in report order. */
export const SYSTEM_IDS = ['floor-core', 'floor-js', 'floor-js-procs', 'nest', 'moleculer', 'floor-js-work', 'nest-work', 'moleculer-work', 'chorus-aio', 'chorus-procs'] as const;
export type SystemId = (typeof SYSTEM_IDS)[number];

/** A running system under test, with the benchmark's client connected to it. */
export interface SystemUnderTest extends WorkflowDriver {
  readonly id: string;
  /** The system's own nats-server. */
  readonly url: string;
  /** nats-server's monitoring endpoint (`/varz`). */
  readonly monitorUrl: string;
  /** The system's processes by name, nats-server included; the driver is counted by the caller. */
  processes(): Record<string, number | undefined>;
  /** Facts worth reporting after the run (terminal states, degraded results, …). */
  notes(): Promise<string[]>;
  stop(): Promise<void>;
}

export interface SystemDefinition {
  id: SystemId;
  /** Short label for tables and the chart. */
  label: string;
  /** One line: what runs, where, with which guarantees. */
  summary: string;
  start(): Promise<SystemUnderTest>;
}
