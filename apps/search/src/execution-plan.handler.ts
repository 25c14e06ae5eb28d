import { Controller, Inject } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  deriveEnvelope,
  MessageTypes,
  StepFailedError,
  type Envelope,
  type Degradation,
  type EnvelopeOf,
  type ExecutionPlanPayload,
  type FusedResult,
  type ProfileDocument,
} from '@chorus/envelope';
import { OnEnvelope, ProfileClient, ProfileRegistry, type HandlerContext } from '@chorus/bus';
import { fuseRrf } from '@chorus/fusion';
import { Metrics } from '@chorus/observability';
import { fanOut, toDegradation } from './profile.fanout';

export const SEARCH_AGENT = 'search';
export const SEARCH_OPTIONS = Symbol('SEARCH_OPTIONS');

export interface SearchOptions {
  profileTimeoutMs: number;
  /** A profile request not answered by then is sent again, while the timeout allows (CHORUS_PROFILE_HEDGE_MS; 0: never). */
  profileHedgeMs?: number;
  /** The best-ranked results, which the answer quotes, carry up to `documentChars` of their text. */
  leadDocuments: number;
  documentChars: number;
  /** Every other result carries its passage that best matches the query (whole sentences, or part of one too long). */
  passageChars: number;
  /** The configured profiles (CHORUS_PROFILES): with those discovery knows, the names metrics label by. */
  profiles?: readonly string[];
}

/** The label of a degraded lens whose profile this deployment does not know (a bounded set of label values). */
const UNKNOWN_PROFILE_LABEL = '_unknown';

/** Turns an `execution_plan` into `tool_results`: parallel profile requests fused with RRF. */
@Controller()
export class ExecutionPlanHandler {
  constructor(
    private readonly profiles: ProfileClient,
    private readonly registry: ProfileRegistry,
    @Inject(SEARCH_OPTIONS) private readonly options: SearchOptions,
    private readonly metrics: Metrics,
  ) {}

  @OnEnvelope(MessageTypes.ExecutionPlan)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<EnvelopeOf<'tool_results'>> {
    const started = Date.now();
    const plan = envelope.payload as ExecutionPlanPayload;
    const deadline = new Date(Math.min(Date.parse(plan.search_deadline), ctx.deadline.getTime()));
    // A plan that waited past its search deadline (the search worker was down, or behind): no lens
    // could answer in no time, and saying the profiles did not answer would blame them for it.
    const late = started - deadline.getTime();
    if (late >= 0) {
      throw new StepFailedError('SEARCH_DEADLINE_PASSED', `the plan reached the search worker ${late} ms after its search deadline (${deadline.toISOString()}): no time was left to search`);
    }
    // A planned profile discovery knows no instance of (it died, or never started) is not waited
    // for: it is reported unavailable at once, and the workflow says it lost that lens.
    const names = plan.profiles.map((p) => p.name).filter((name) => this.registry.has(name));
    const absent: Degradation[] = plan.profiles
      .filter((p) => !this.registry.has(p.name))
      .map((p) => ({ profile: p.name, reason: 'unavailable', detail: `no instance of profile ${p.name} answers discovery (none runs, or each one hangs)` }));
    const { replies, degraded: failed, requests } = await fanOut(this.profiles, {
      profiles: names,
      text: plan.search_text,
      limit: plan.fusion.rank_window,
      correlationId: envelope.correlation_id,
      deadline,
      profileTimeoutMs: this.options.profileTimeoutMs,
      signal: ctx.signal,
    });
    for (const d of failed) if (d.reason === 'unavailable') this.registry.markUnavailable(d.profile);
    // Every request counts, a try that fails and runs again included: each one was made. (Only
    // profiles discovery knows are asked, so the labels stay a bounded set.)
    for (const r of requests) this.metrics.profileRequests.observe({ profile: r.profile, outcome: r.outcome }, r.seconds);
    const degraded = [...absent, ...failed];
    if (degraded.length > 0) ctx.log.warn({ degraded }, 'searched without every lens');
    if (plan.require_all && degraded.length > 0) {
      const missing = degraded.map((d) => `${d.profile} (${d.reason})`).join(', ');
      throw new StepFailedError('PROFILE_MISSING', `require_all is set and these profiles did not answer: ${missing}`);
    }
    if (replies.length === 0) {
      const missing = degraded.map((d) => `${d.profile}: ${d.detail}`).join('; ');
      // No lens at all usually means the bus or every profile is restarting: worth another try while
      // there is time left for one; the step fails for good once there is not.
      const retryable = deadline.getTime() - Date.now() > 1000;
      throw new StepFailedError('NO_PROFILE_ANSWERED', `no planned profile answered: ${missing}`, { retryable });
    }
    const fused = fuseRrf(
      replies.map((r) => ({ profile: r.profile, ids: r.hits.map((h) => h.id) })),
      { k: plan.fusion.k, rankWindow: plan.fusion.rank_window, weights: plan.fusion.weights },
    ).slice(0, plan.top_k);
    const { found: documents, failures } = await this.fetchDocuments(fused.map((f) => f.id), plan.search_text, replies.map((r) => r.profile), deadline, ctx);
    // Results left without their text are no silent blanks: the profiles that failed to give it are
    // named, and the workflow completes degraded.
    const untexted = fused.filter((f) => !documents.has(f.id)).length;
    if (untexted > 0) {
      for (const d of failures) degraded.push({ ...d, detail: `${d.detail}; ${untexted} of ${fused.length} results have no text` });
      if (failures.length === 0) ctx.log.warn({ untexted }, 'no profile holds the text of some results');
    }
    const results: FusedResult[] = fused.map((f) => {
      const doc = documents.get(f.id);
      return { id: f.id, title: doc?.title ?? '', text: doc?.text ?? '', score: f.score, ranks: f.ranks };
    });
    // Counted once the results go out (not for a try that fails and runs again), each lens named
    // only if this deployment knows it: a plan published by a client may name anything.
    for (const d of degraded) {
      const known = this.registry.has(d.profile) || (this.options.profiles ?? []).includes(d.profile);
      this.metrics.lensesMissing.inc({ profile: known ? d.profile : UNKNOWN_PROFILE_LABEL, reason: d.reason });
    }
    return deriveEnvelope(envelope, {
      messageType: MessageTypes.ToolResults,
      agent: SEARCH_AGENT,
      targetAgent: 'responder',
      nextSteps: ['responder'],
      payload: {
        request: plan.request,
        search_text: plan.search_text,
        results,
        profiles_used: replies.map((r) => r.profile),
        degraded,
        fusion: plan.fusion,
        candidates: Object.fromEntries(replies.map((r) => [r.profile, r.hits.length])),
        took_ms: Date.now() - started,
      },
    });
  }

  /**
   * Texts of the fused results (in rank order), from the profiles that answered (any of them may
   * hold a document): the lead results' up to `documentChars`, the others' best passage for the query.
   */
  private async fetchDocuments(
    ids: string[],
    query: string,
    profiles: string[],
    deadline: Date,
    ctx: HandlerContext,
  ): Promise<{ found: Map<string, ProfileDocument>; failures: Degradation[] }> {
    const found = new Map<string, ProfileDocument>();
    const failures: Degradation[] = [];
    for (const profile of profiles) {
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length === 0) break;
      const timeout = Math.min(this.options.profileTimeoutMs, deadline.getTime() - Date.now());
      if (timeout <= 0) break;
      try {
        const lead = missing.filter((id) => ids.indexOf(id) < this.options.leadDocuments).length;
        const request = { ids: missing, query, lead, lead_max_chars: this.options.documentChars, max_chars: this.options.passageChars };
        const reply = await this.profiles.documents(profile, request, timeout, ctx.signal);
        for (const d of reply.documents) found.set(d.id, d);
      } catch (e) {
        ctx.log.warn({ err: e, profile }, 'could not fetch documents');
        failures.push(toDegradation(profile, e));
      }
    }
    return { found, failures };
  }
}
