import { parseChorusConfig } from '@chorus/config';
import type { ClassificationResultPayload, FusedResult, QueryPayload } from '@chorus/envelope';
import { fuseRrf } from '@chorus/fusion';
import { createVocabulary, isProfileEngineName, PROFILE_ENGINES, PROFILE_ENGINE_RESOURCES } from '@chorus/profiles';
import { classifyQuery, withTypoSignals } from '../../apps/intent/src';
import { planExecution } from '../../apps/planner/src';
import { loadCorpus, SentenceCache, toServiceDefinition, type InProcessProfile } from '../../apps/profile/src';
import { composeAnswer, defaultAnswerOptions } from '../../apps/responder/src';
import { REPO_ROOT } from './bench.support';
import type { AgentHop, BenchMessage, HopStep } from './workload';

/**
 * The application's own work, for the "same work" baselines: each hop runs the code Chorus's agent
 * for that role runs, in-process and with the same settings (the defaults: `bm25` and `trigram`
 * over the project's docs, RRF k 60, three lead documents), on the message the baseline carries:
 *
 * - intent: the rule-based classification, with the corpus vocabulary's typo hints;
 * - planner: the same plan (route, profiles, fusion, deadlines);
 * - search: each planned profile's engine searched (what a profile service answers), the lists
 *   fused with RRF, then the results' texts and passages fetched (what the documents endpoint answers);
 * - responder: the extractive answer with its citations and snippets.
 *
 * What it leaves out is Chorus's machinery: the envelope and its validation, the profile services
 * and the vocabulary as request/reply over NATS (here, function calls), the hub and its ledger.
 * So a same-work baseline against Chorus shows what that machinery costs, the work held equal.
 */
export function createAppWork(root = REPO_ROOT): HopStep {
  const config = parseChorusConfig({ ...process.env, NATS_URL: undefined }, root);
  const corpus = loadCorpus(config.corpusPath, config.root);
  const byId = new Map(corpus.documents.map((d) => [d.id, d]));
  const sentences = new SentenceCache(2000);
  const profiles = new Map<string, InProcessProfile>();
  for (const name of config.profiles) {
    if (!isProfileEngineName(name) || PROFILE_ENGINE_RESOURCES[name].length > 0) {
      throw new Error(`the same-work baselines run profiles that need only the corpus (bm25, trigram), not ${name}`);
    }
    profiles.set(name, toServiceDefinition(name, PROFILE_ENGINES[name](corpus.documents, {}), corpus, byId, sentences));
  }
  const vocabulary = createVocabulary(corpus.documents);
  const available = [...profiles.keys()].sort();
  const search = config.search;
  const plannerOptions = { profiles: config.profiles, rrfK: search.rrfK, rankWindow: search.rankWindow, rrfWeights: search.rrfWeights, responderReserveMs: search.responderReserveMs };
  const answerOptions = { ...defaultAnswerOptions(), maxDocuments: Math.max(1, search.leadDocuments) };
  const requestOf = (m: BenchMessage): QueryPayload => ({
    query: m.query,
    top_k: m.top_k,
    require_all: m.require_all,
    ...(m.session_id ? { session_id: m.session_id } : {}),
    ...(m.profiles ? { profiles: m.profiles } : {}),
  });

  const steps: Record<AgentHop, (m: BenchMessage) => void> = {
    intent: (m) => {
      const rules = classifyQuery(requestOf(m));
      const classification = rules.explicit_profiles.length > 0 ? rules : withTypoSignals(rules, vocabulary.findTypos(rules.search_text));
      m.classification = { request: requestOf(m), ...classification };
    },
    planner: (m) => {
      m.plan = planExecution(m.classification as ClassificationResultPayload, plannerOptions, new Date(m.deadline), new Date(), available);
    },
    search: (m) => {
      const plan = m.plan as ReturnType<typeof planExecution>;
      const replies = plan.profiles.map((p) => profiles.get(p.name)!.search({ text: plan.search_text, limit: plan.fusion.rank_window }));
      const fused = fuseRrf(
        replies.map((r) => ({ profile: r.profile, ids: r.hits.map((h) => h.id) })),
        { k: plan.fusion.k, rankWindow: plan.fusion.rank_window, weights: plan.fusion.weights },
      ).slice(0, plan.top_k);
      const documents = new Map(
        profiles
          .get(replies[0].profile)!
          .documents({ ids: fused.map((f) => f.id), query: plan.search_text, lead: search.leadDocuments, lead_max_chars: search.documentChars, max_chars: search.passageChars })
          .documents.map((d) => [d.id, d]),
      );
      const results: FusedResult[] = fused.map((f) => {
        const d = documents.get(f.id);
        return { id: f.id, title: d?.title ?? '', text: d?.text ?? '', score: f.score, ranks: f.ranks };
      });
      m.results = { search_text: plan.search_text, results, profiles_used: replies.map((r) => r.profile), fusion: plan.fusion };
    },
    responder: (m) => {
      const found = m.results as { search_text: string; results: FusedResult[] };
      const { answer, results, sources } = composeAnswer(found.search_text, found.results, answerOptions);
      // What the client receives, as Chorus's response carries it; the search step's copy is dropped.
      m.answer = { query: m.query, answer, results, sources };
      m.results = undefined;
    },
  };
  return (m, hop) => {
    m.steps.push({ agent: hop, at: new Date().toISOString() });
    steps[hop](m);
    return m;
  };
}
