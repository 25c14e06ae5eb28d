/**
 * How the fusion defaults were chosen (docs/retrieval.md): `node dist/scripts/eval/tune.js --corpus
 * <jsonl> --queries <train jsonl> --qrels <train tsv>`. Runs each profile's engine directly (the
 * same code the profile services run) on the TRAIN queries only, then scores every fusion setting
 * of a grid with the library's own RRF. Besides the means, it estimates how often a setting would
 * meet the search targets on a dev-sized sample: the share of `--samples` random draws of
 * `--sample-size` train queries (with replacement) on which fused Recall@100 >= best single +
 * 0.015 and fused nDCG@10 >= best single - 0.005. The targets sit close to the noise of a
 * 150-query mean, so that share, not the mean alone, is what the defaults maximise.
 * `--wordvec '{"feedbackDocuments":0}'` builds wordvec with other options (WordvecOptions), to
 * compare its variants the same way.
 */
import { readFileSync } from 'node:fs';
import { fuseRrf } from '@chorus/fusion';
import { PROFILE_ENGINES, PROFILE_ENGINE_RESOURCES, createWordvecEngine, parseJsonlCorpus, type EngineResources, type SearchEngine, type WordvecOptions } from '@chorus/profiles';
import { loadWordVectors } from '../../apps/profile/src/word-vectors.loader';
import { flags } from '../bench/bench.support';
import { measureQuery, parseQrels, type QueryMeasures } from './trec.metrics';

interface Setting {
  k: number;
  rankWindow: number;
  weights: Record<string, number>;
}

async function main(): Promise<void> {
  const opts = flags({ corpus: '', queries: '', qrels: '', profiles: 'bm25,trigram,wordvec', samples: '400', 'sample-size': '150', top: '15', wordvec: '' });
  const wordvecOptions = opts.wordvec ? (JSON.parse(opts.wordvec) as Partial<WordvecOptions>) : null;
  const profiles = opts.profiles.split(',');
  const docs = parseJsonlCorpus(readFileSync(opts.corpus, 'utf8'), opts.corpus);
  const qrels = parseQrels(readFileSync(opts.qrels, 'utf8'));
  const queries = readFileSync(opts.queries, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; text: string });
  const judged = queries.filter((q) => [...(qrels.get(q.id)?.values() ?? [])].some((r) => r > 0));

  const needsVectors = profiles.some((p) => (PROFILE_ENGINE_RESOURCES as Record<string, readonly string[]>)[p]?.includes('wordVectors'));
  const resources: EngineResources = needsVectors ? { wordVectors: await loadWordVectors() } : {};
  const lists = new Map<string, string[][]>();
  for (const profile of profiles) {
    const engine: SearchEngine =
      profile === 'wordvec' && wordvecOptions && resources.wordVectors
        ? createWordvecEngine(docs, resources.wordVectors, wordvecOptions)
        : PROFILE_ENGINES[profile as keyof typeof PROFILE_ENGINES](docs, resources);
    if (profile === 'wordvec') console.log(`wordvec: ${engine.description}`);
    lists.set(profile, judged.map((q) => engine.search(q.text, 1000).map((h) => h.id)));
  }
  const measure = (rankings: string[][]): QueryMeasures[] => judged.map((q, i) => measureQuery(qrels.get(q.id)!, rankings[i]));
  const singles = profiles.map((p) => ({ profile: p, perQuery: measure(lists.get(p)!.map((l) => l.slice(0, 100))) }));
  for (const s of singles) console.log(`${s.profile.padEnd(8)} nDCG@10 ${mean(s.perQuery, 'ndcg10').toFixed(4)}  R@100 ${mean(s.perQuery, 'recall100').toFixed(4)}`);

  const rows: Array<{ setting: Setting; ndcg: number; recall: number; pass: number }> = [];
  const draws = drawSamples(judged.length, Number(opts['sample-size']), Number(opts.samples));
  for (const setting of grid(profiles)) {
    const fused = judged.map((_, i) =>
      fuseRrf(profiles.map((p) => ({ profile: p, ids: lists.get(p)![i] })), setting).slice(0, 100).map((f) => f.id),
    );
    const perQuery = measure(fused);
    rows.push({ setting, ndcg: mean(perQuery, 'ndcg10'), recall: mean(perQuery, 'recall100'), pass: passShare(perQuery, singles.map((s) => s.perQuery), draws) });
  }
  rows.sort((a, b) => b.pass - a.pass || b.ndcg - a.ndcg);
  console.log('\npass share  nDCG@10  R@100   k  window  weights');
  for (const r of rows.slice(0, Number(opts.top))) {
    console.log(`${r.pass.toFixed(3).padStart(10)}  ${r.ndcg.toFixed(4)}  ${r.recall.toFixed(4)}  ${String(r.setting.k).padStart(2)}  ${String(r.setting.rankWindow).padStart(6)}  ${JSON.stringify(r.setting.weights)}`);
  }
}

/** k, rank window and weights relative to bm25 (weight 1); the other profiles' weights vary. */
function* grid(profiles: readonly string[]): Generator<Setting> {
  const others = profiles.filter((p) => p !== 'bm25');
  const steps = [0.3, 0.5, 0.7, 1];
  const combos = others.reduce<Record<string, number>[]>((acc, p) => acc.flatMap((w) => steps.map((s) => ({ ...w, [p]: s }))), [{}]);
  for (const k of [1, 2, 5, 10, 20, 60]) {
    for (const rankWindow of [100, 200]) {
      for (const w of combos) yield { k, rankWindow, weights: { ...(profiles.includes('bm25') ? { bm25: 1 } : {}), ...w } };
    }
  }
}

function mean(perQuery: readonly QueryMeasures[], key: keyof QueryMeasures, indices?: readonly number[]): number {
  const picked = indices ?? perQuery.map((_, i) => i);
  let sum = 0;
  for (const i of picked) sum += perQuery[i][key];
  return sum / picked.length;
}

/** Fixed pseudo-random draws (a linear congruential generator), so every run compares settings on the same samples. */
function drawSamples(n: number, size: number, count: number): number[][] {
  let state = 12345;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
  return Array.from({ length: count }, () => Array.from({ length: size }, () => Math.floor(next() * n)));
}

function passShare(fused: readonly QueryMeasures[], singles: readonly (readonly QueryMeasures[])[], draws: readonly number[][]): number {
  let passed = 0;
  for (const draw of draws) {
    const bestRecall = Math.max(...singles.map((s) => mean(s, 'recall100', draw)));
    const bestNdcg = Math.max(...singles.map((s) => mean(s, 'ndcg10', draw)));
    if (mean(fused, 'recall100', draw) >= bestRecall + 0.015 && mean(fused, 'ndcg10', draw) >= bestNdcg - 0.005) passed++;
  }
  return passed / draws.length;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
