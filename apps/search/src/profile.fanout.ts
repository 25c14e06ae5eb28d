import { NoRespondersError, RequestTimeoutError, type ProfileClient } from '@chorus/bus';
import type { Degradation, ProfileSearchReply } from '@chorus/envelope';

export interface FanOutRequest {
  profiles: readonly string[];
  text: string;
  limit: number;
  correlationId: string;
  /** The search step must be done by then. */
  deadline: Date;
  /** Cap on the wait for any one profile. */
  profileTimeoutMs: number;
  signal?: AbortSignal;
}

export interface FanOutResult {
  replies: ProfileSearchReply[];
  degraded: Degradation[];
  /** Each profile's request: how long it took to settle, and how (`ok`, or the degradation's reason). */
  requests: Array<{ profile: string; seconds: number; outcome: 'ok' | Degradation['reason'] }>;
}

/**
 * One request per profile, all in parallel, each bounded by what remains of the deadline and the
 * per-profile timeout. Resolves as soon as every profile has answered or failed; a profile that
 * does not answer in time costs its lens, not the workflow.
 */
export async function fanOut(client: ProfileClient, request: FanOutRequest): Promise<FanOutResult> {
  const started = performance.now();
  const settledAt: number[] = [];
  const settled = await Promise.allSettled(
    request.profiles.map((profile, i) => {
      const timeout = Math.min(request.profileTimeoutMs, request.deadline.getTime() - Date.now());
      if (timeout <= 0) return Promise.reject(new RequestTimeoutError(profile, 0));
      return client
        .search(profile, { text: request.text, limit: request.limit, correlation_id: request.correlationId }, timeout, request.signal)
        .finally(() => (settledAt[i] = performance.now()));
    }),
  );
  const replies: ProfileSearchReply[] = [];
  const degraded: Degradation[] = [];
  const requests: FanOutResult['requests'] = [];
  settled.forEach((outcome, i) => {
    const profile = request.profiles[i];
    const seconds = ((settledAt[i] ?? started) - started) / 1000;
    if (outcome.status === 'fulfilled') {
      replies.push(outcome.value);
      requests.push({ profile, seconds, outcome: 'ok' });
    } else {
      const d = toDegradation(profile, outcome.reason);
      degraded.push(d);
      requests.push({ profile, seconds, outcome: d.reason });
    }
  });
  return { replies, degraded, requests };
}

/** How a profile's failed request is reported in `tool_results.degraded`. */
export function toDegradation(profile: string, error: unknown): Degradation {
  if (error instanceof NoRespondersError) return { profile, reason: 'unavailable', detail: `no instance of profile ${profile} is running` };
  if (error instanceof RequestTimeoutError) {
    return { profile, reason: 'timeout', detail: `profile ${profile} did not answer within ${error.timeoutMs} ms` };
  }
  return { profile, reason: 'error', detail: error instanceof Error ? error.message : String(error) };
}
