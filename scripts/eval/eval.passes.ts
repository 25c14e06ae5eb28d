/**
 * One pass of an evaluation: every query submitted over the bus as a workflow and awaited, a fixed
 * number in flight at once. A workflow that does not end `completed` (failed, timed out, or
 * degraded because a planned profile did not answer) is recorded as a problem, never silently
 * scored as an empty ranking.
 */
import { DEFAULT_TENANT } from '@chorus/envelope';
import type { ChorusClient } from '@chorus/bus';
import type { RunEntry } from './trec.metrics';

export interface EvalQuery {
  id: string;
  text: string;
}

export interface PassOptions {
  /** Profiles to name in the request; null lets the planner choose (its default route). */
  profiles: string[] | null;
  topK: number;
  deadlineMs: number;
  concurrency: number;
}

export interface PassResult {
  /** qid -> the system's ranking. */
  rankings: Map<string, RunEntry[]>;
  /** One line per workflow that did not complete cleanly. */
  problems: string[];
  wallMs: number;
  /** Profiles the search worker fused, with how many queries used each. */
  profilesUsed: Map<string, number>;
}

export async function runPass(client: ChorusClient, queries: readonly EvalQuery[], options: PassOptions): Promise<PassResult> {
  const rankings = new Map<string, RunEntry[]>();
  const problems: string[] = [];
  const profilesUsed = new Map<string, number>();
  const started = Date.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < queries.length) {
      const query = queries[next++];
      try {
        const { workflow } = await client.submitAndWait({
          query: query.text,
          tenant_id: DEFAULT_TENANT,
          profiles: options.profiles,
          top_k: options.topK,
          deadline_ms: options.deadlineMs,
          require_all: false,
        });
        if (!workflow) {
          problems.push(`query ${query.id}: the hub does not know the workflow`);
          continue;
        }
        if (workflow.status !== 'completed' || workflow.degraded || !workflow.result) {
          const why = [...workflow.degradations.map((d) => `${d.profile} ${d.reason}`), ...workflow.errors.map((e) => JSON.stringify(e))].join('; ');
          problems.push(`query ${query.id}: workflow ${workflow.correlation_id} ended ${workflow.status}${workflow.degraded ? ' (degraded)' : ''}${why ? `: ${why}` : ''}`);
          continue;
        }
        rankings.set(query.id, workflow.result.results.map((r) => ({ id: r.id, score: r.score })));
        for (const p of workflow.result.provenance.profiles_used) profilesUsed.set(p, (profilesUsed.get(p) ?? 0) + 1);
      } catch (error) {
        problems.push(`query ${query.id}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, queries.length)) }, worker));
  return { rankings, problems, wallMs: Date.now() - started, profilesUsed };
}
