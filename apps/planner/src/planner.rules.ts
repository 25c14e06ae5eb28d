import {
  StepFailedError,
  type ClassificationResultPayload,
  type ExecutionPlanPayload,
  type PlannedProfile,
  type Route,
} from '@chorus/envelope';

export interface PlannerOptions {
  /** Profiles this deployment is configured with, in preference order. */
  profiles: readonly string[];
  rrfK: number;
  rankWindow: number;
  /** Per-profile RRF weights (absent: 1). */
  rrfWeights?: Readonly<Record<string, number>>;
  /** Time left for the responder after the search step's deadline. */
  responderReserveMs: number;
}

/**
 * A named profile this deployment is not configured with and that no instance serves (discovery
 * has looked) is a caller's mistake, most often a typo: the step fails at once, not retried, naming
 * it and the profiles there are, instead of the search step retrying until the deadline for a lens
 * that will not come. A configured profile with no instance is a lost lens, not a mistake: it stays
 * planned. Before discovery has looked (`available` null), every name is taken on trust.
 */
function checkKnown(named: readonly string[], configured: readonly string[], available: readonly string[] | null): void {
  if (available === null) return;
  const unknown = named.filter((n) => !configured.includes(n) && !available.includes(n));
  if (unknown.length === 0) return;
  const known = unique([...configured, ...available]);
  throw new StepFailedError(
    'UNKNOWN_PROFILE',
    `no profile ${unknown.join(', ')} in this deployment (not configured, and no instance is running); the profiles are: ${known.join(', ') || 'none'}`,
    { retryable: false, requestError: true },
  );
}

/** A profile the planner chooses when its confidence reaches this. */
export const SELECTION_THRESHOLD = 0.5;

/**
 * Plans a search. Routes are explicit: DIRECT when the caller named one profile, PARALLEL when it
 * named several, COMPLEX when the planner chooses from the classification. Each profile gets a
 * confidence and a reason; those below the threshold are listed as alternatives.
 */
export function planExecution(
  classification: ClassificationResultPayload,
  options: PlannerOptions,
  workflowDeadline: Date,
  now: Date,
  /** Profiles with a running instance, from discovery; null when unknown (then the configured ones). */
  available: readonly string[] | null = null,
): ExecutionPlanPayload {
  const running = (name: string) => available === null || available.includes(name);
  const explicit = classification.explicit_profiles;
  let route: Route;
  let profiles: PlannedProfile[];
  let alternatives: PlannedProfile[];
  if (explicit.length > 0) {
    checkKnown(explicit, options.profiles, available);
    route = explicit.length === 1 ? 'DIRECT' : 'PARALLEL';
    profiles = explicit.map((name) => ({
      name,
      confidence: 1,
      reason: running(name) ? 'named by the caller' : 'named by the caller; no instance is running',
    }));
    alternatives = unique([...options.profiles, ...(available ?? [])])
      .filter((p) => !explicit.includes(p))
      .map((name) => ({ name, confidence: 0, reason: 'not named by the caller' }));
  } else {
    route = 'COMPLEX';
    // Choose among the configured profiles and any other that runs now (one started after this
    // planner). A configured one the query calls for stays planned while no instance runs: the
    // search step reports it unavailable without waiting for it, so the workflow says it lost that
    // lens (degraded), and require_all fails naming it; it is not quietly dropped.
    const candidates = unique([...options.profiles, ...(available ?? [])]);
    const scored = candidates.map((name) => {
      const p = scoreProfile(name, classification);
      return running(name) ? p : { ...p, reason: `${p.reason}; no instance is running` };
    });
    profiles = scored.filter((p) => p.confidence >= SELECTION_THRESHOLD);
    alternatives = scored.filter((p) => p.confidence < SELECTION_THRESHOLD);
    if (profiles.length === 0 && scored.length > 0) {
      const best = [...scored].sort((a, b) => b.confidence - a.confidence)[0];
      profiles = [best];
      alternatives = alternatives.filter((p) => p !== best);
    }
  }
  const remaining = workflowDeadline.getTime() - now.getTime();
  const reserve = Math.min(options.responderReserveMs, Math.max(0, Math.floor(remaining * 0.2)));
  const topK = classification.request.top_k;
  return {
    request: classification.request,
    search_text: classification.search_text,
    route,
    profiles,
    alternatives,
    top_k: topK,
    fusion: {
      k: options.rrfK,
      rank_window: Math.max(options.rankWindow, topK),
      ...(options.rrfWeights && Object.keys(options.rrfWeights).length > 0 ? { weights: { ...options.rrfWeights } } : {}),
    },
    search_deadline: new Date(workflowDeadline.getTime() - reserve).toISOString(),
    require_all: classification.request.require_all,
    explanation: explain(route, profiles, classification),
  };
}

/**
 * The likely typos the intent agent found (`typo:<word>[:<suggestion>]` signals, from the corpus
 * vocabulary), as `word -> suggestion` for the reasons.
 */
export function likelyTypos(c: ClassificationResultPayload): string[] {
  return c.signals
    .filter((s) => s.startsWith('typo:'))
    .map((s) => {
      const [, word, suggestion] = s.split(':');
      return suggestion ? `${word} -> ${suggestion}` : word;
    });
}

/** How useful a profile looks for this query; the reasons are part of the plan. */
function scoreProfile(name: string, c: ClassificationResultPayload): PlannedProfile {
  const identifiers = c.entities.filter((e) => e.kind === 'identifier' || e.kind === 'flag').length;
  const quoted = c.entities.some((e) => e.kind === 'quoted');
  const typoList = likelyTypos(c);
  const typos = typoList.length;
  const reasons: string[] = [];
  let confidence: number;
  switch (name) {
    case 'bm25':
      confidence = 0.8;
      reasons.push('exact-term ranking suits most queries');
      if (c.modality === 'keyword') {
        confidence += 0.1;
        reasons.push('keyword query');
      }
      if (typos > 0) {
        confidence -= 0.1;
        reasons.push('likely typos weaken exact terms');
      }
      break;
    case 'trigram':
      confidence = 0.6;
      reasons.push('character n-grams catch partial and inflected words');
      if (identifiers > 0) {
        confidence += 0.2;
        reasons.push('code identifiers match as substrings');
      }
      if (quoted) {
        confidence += 0.1;
        reasons.push('quoted phrase');
      }
      if (typos > 0) {
        confidence += 0.3;
        reasons.push(`likely typos (${typoList.join(', ')}): character n-grams still match them`);
      }
      break;
    case 'wordvec':
      // Fused at the weight tuned for it, meaning adds recall to natural language (docs/retrieval.md);
      // identifiers and code have no word vectors.
      confidence = 0.6;
      reasons.push('semantic similarity: matches related words, not only equal ones');
      if (c.modality === 'natural_language' && (c.intent === 'definition' || c.intent === 'how_to' || c.intent === 'question')) {
        confidence += 0.1;
        reasons.push(`natural-language ${c.intent} query`);
      }
      if (c.modality === 'code') {
        confidence -= 0.3;
        reasons.push('code queries need exact tokens');
      } else if (c.modality === 'mixed') {
        confidence -= 0.1;
        reasons.push('code identifiers have no word vectors');
      }
      break;
    default:
      confidence = SELECTION_THRESHOLD;
      reasons.push('no specific rule; included by default');
  }
  return { name, confidence: round(Math.max(0, Math.min(1, confidence))), reason: reasons.join('; ') };
}

function explain(route: Route, profiles: PlannedProfile[], c: ClassificationResultPayload): string {
  const names = profiles.map((p) => p.name).join(', ') || 'none';
  if (route === 'DIRECT') return `The caller named one profile (${names}); it is queried alone.`;
  if (route === 'PARALLEL') return `The caller named ${profiles.length} profiles (${names}); they are queried in parallel and fused with RRF.`;
  const typos = likelyTypos(c);
  const withTypos = typos.length > 0 ? ` with likely typos (${typos.join(', ')})` : '';
  const how = profiles.length === 1 ? `querying ${names} alone` : `querying ${names} in parallel and fusing with RRF`;
  return `A ${c.complexity} ${c.modality.replace('_', ' ')} ${c.intent.replace('_', '-')} query${withTypos}: ${how}.`;
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
