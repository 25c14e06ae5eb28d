import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bus, NoRespondersError, ProfileClient, defaultBusOptions } from '@chorus/bus';
import { parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { createWordVectors, type WordVectors } from '@chorus/profiles';
import { startNats, type NatsHandle } from '@chorus/testing';
import { startProfiles } from '../apps/profile/src';
import { UsageError, parseEvalOptions } from '../scripts/eval/eval.options';
import { checkPasses, checkTargets, formatVerdicts, type PassFigures } from '../scripts/eval/eval.report';

const ROOT = join(__dirname, '..');
const EVAL = join(ROOT, 'dist', 'scripts', 'eval', 'eval.js');
/** The shared reference evaluator, beside the checkout on developer machines and in CI. */
const REFERENCE = join(ROOT, '..', 'shared', 'datasets', 'eval-trec.mjs');

const CORPUS = [
  { id: 'd1', title: 'Reciprocal rank fusion', text: 'Fusion sums reciprocal ranks of every list.' },
  { id: 'd2', title: 'Porter stemmer', text: 'The stemmer reduces inflected words to their stems.' },
  { id: 'd3', title: 'JetStream consumers', text: 'A durable consumer acknowledges each delivered message.' },
  { id: 'd4', title: 'Key-value buckets', text: 'A bucket keeps the latest value of each key.' },
  { id: 'd5', title: 'Dead letters', text: 'Envelopes that fail validation go to the dead-letter subject.' },
];

function writeFixture(dir: string): void {
  writeFileSync(join(dir, 'corpus.jsonl'), CORPUS.map((d) => JSON.stringify(d)).join('\n'));
  const queries = [
    { id: 'q1', text: 'reciprocal rank fusion' },
    { id: 'q2', text: 'porter stemmer stems' },
    // A numeric id, as BEIR-style files may hold: read as its digits, as the corpus reads document ids.
    { id: 3, text: 'durable consumer acknowledges messages' },
  ];
  writeFileSync(join(dir, 'queries.jsonl'), queries.map((q) => JSON.stringify(q)).join('\n'));
  writeFileSync(join(dir, 'qrels.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n3\td3\t1\n3\td4\t1\n');
}

function runEval(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [EVAL, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run eval', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'chorus-eval-'));
    writeFixture(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('eval - runs every query through the bus, writes TREC runs and scores them like trec_eval', async () => {
    const out = join(dir, 'out');
    const reference = existsSync(REFERENCE) ? ['--reference-evaluator', REFERENCE] : [];
    const { code, output } = await runEval([
      '--corpus', join(dir, 'corpus.jsonl'), '--queries', join(dir, 'queries.jsonl'), '--qrels', join(dir, 'qrels.tsv'),
      '--out', out, '--profiles', 'bm25,trigram', '--warmup', '1', '--concurrency', '2', ...reference,
    ]);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('fused pass: 3 queries') });
    for (const name of ['fused', 'bm25', 'trigram']) {
      const lines = readFileSync(join(out, `${name}.run`), 'utf8').trim().split('\n');
      // qid Q0 docid rank score tag; ranks from 1, scores strictly decreasing within a query.
      const q1 = lines.map((l) => l.split(' ')).filter((f) => f[0] === 'q1');
      expect(q1[0]).toEqual(['q1', 'Q0', 'd1', '1', expect.any(String), `chorus-${name}`]);
      for (let i = 1; i < q1.length; i++) expect(Number(q1[i][4])).toBeLessThan(Number(q1[i - 1][4]));
      expect(new Set(lines.map((l) => l.split(' ')[0]))).toEqual(new Set(['q1', 'q2', '3']));
    }
    // bm25 puts d1, d2 and d3 first; query 3's second relevant document (d4) shares no term with it.
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.runs.bm25.mrr10).toBe(1);
    expect(summary.runs.bm25.ndcg10).toBeLessThan(1);
    expect(summary.runs.fused.queries).toBe(3);
    expect(output).toMatch(/^fused\s+\d\.\d{4}\s+\d\.\d{4}\s+1\.0000\s+3\s/m);
  }, 180_000);

  it('eval - with --check, exits 3 when a target is missed', async () => {
    const { code, output } = await runEval([
      '--corpus', join(dir, 'corpus.jsonl'), '--queries', join(dir, 'queries.jsonl'), '--qrels', join(dir, 'qrels.tsv'),
      '--out', join(dir, 'check'), '--profiles', 'bm25', '--warmup', '0', '--check', '--min-bm25-ndcg', '1.5',
    ]);
    expect(output).toMatch(/MISSED bm25 nDCG@10 >= 1.5/);
    expect(code).toBe(3);
  }, 180_000);

  it('eval - with --check and --recall-gain-floor, reports a missed recall target loudly and fails only below the floor', async () => {
    const args = [
      '--corpus', join(dir, 'corpus.jsonl'), '--queries', join(dir, 'queries.jsonl'), '--qrels', join(dir, 'qrels.tsv'),
      '--out', join(dir, 'floor'), '--profiles', 'bm25', '--warmup', '0', '--check', '--min-bm25-ndcg', '0',
    ];
    // One profile: fused equals bm25, so its recall gain is 0, below the 0.015 target but at a floor of 0.
    const { code, output } = await runEval([...args, '--recall-gain-floor', '0']);
    expect(output).toMatch(/^MISSED fused Recall@100 >= best single \+ 0\.015: .*TARGET NOT MET, only the CI floor \(best single \+ 0 = \d\.\d{4}\) holds$/m);
    expect(output).toMatch(/eval: TARGET MISSED: fused Recall@100/);
    expect(code).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'floor', 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ all_targets_met: false, check_passes: true });
  }, 180_000);

  it('eval - refuses each bad input before it starts anything, naming it (exit 2, no stack trace)', async () => {
    const file = (name: string, content: string) => {
      writeFileSync(join(dir, name), content);
      return join(dir, name);
    };
    const base = { corpus: join(dir, 'corpus.jsonl'), queries: join(dir, 'queries.jsonl'), qrels: join(dir, 'qrels.tsv'), out: join(dir, 'bad-out') };
    const args = (over: Partial<typeof base>, extra: string[] = []) => Object.entries({ ...base, ...over }).flatMap(([k, v]) => [`--${k}`, v]).concat(extra);
    const cases: Array<[string[], string]> = [
      [args({ queries: file('none.jsonl', '\n') }), 'holds no query'],
      [args({ queries: file('twice.jsonl', '{"id":"q1","text":"a"}\n{"id":"q1","text":"b"}\n') }), 'twice.jsonl:2: query id "q1" again (first on line 1)'],
      [args({ queries: file('broken.jsonl', '{"id":"q1","text":"a"}\n{nope\n') }), 'broken.jsonl:2: invalid JSON'],
      [args({ queries: file('spaced.jsonl', '{"id":"q 1","text":"a"}\n') }), 'spaced.jsonl:1: query id "q 1" holds white space'],
      [args({ qrels: file('empty.tsv', '') }), 'no judgement read'],
      [args({ corpus: join(dir, 'nope.jsonl') }), `--corpus ${join(dir, 'nope.jsonl')}: no such file`],
      [args({}, ['--profiles', 'bm52']), '--profiles must name profiles of bm25, trigram, wordvec'],
      [args({}, ['--profiles', 'bm25', '--fused-profiles', 'bm25,wordvec']), '--fused-profiles names wordvec, which --profiles does not run (bm25)'],
    ];
    for (const [argv, expected] of cases) {
      const { code, output } = await runEval(argv);
      expect({ code, named: output.includes(expected), stack: /\n\s+at /.test(output) }).toEqual({ code: 2, named: true, stack: false });
    }
  });

  it('eval - exits 2 and prints its usage without the required options', async () => {
    const { code, output } = await runEval(['--corpus', 'x.jsonl']);
    expect(code).toBe(2);
    expect(output).toMatch(/missing --queries, --qrels, --out/);
  });
});

describe('eval targets', () => {
  const pass = (name: string, ndcg10: number, recall100: number, wallMs = 1000): PassFigures => ({
    name,
    measures: { ndcg10, recall100, mrr10: 0, queries: 150, missing: 0, perQuery: new Map() },
    wallMs,
    queries: 150,
  });
  const targets = { minBm25Ndcg: 0.67, minRecallGain: 0.015, recallGainFloor: null, maxNdcgLoss: 0.005, maxFusedSeconds: 5, fusedSecondsCeiling: null };
  const singles = [pass('bm25', 0.6727, 0.8953), pass('trigram', 0.6479, 0.9187)];

  it('checkTargets - a recall gain below the target fails the check without a floor', () => {
    const verdicts = checkTargets(pass('fused', 0.69, 0.93), singles, targets);
    expect(verdicts.map((v) => v.met)).toEqual([true, false, true, true]);
    expect(verdicts[1].floor).toBeUndefined();
    expect(checkPasses(verdicts)).toBe(false);
  });

  it('checkTargets - a floor accepts a miss above it, still reported as MISSED, and rejects one below it', () => {
    const above = checkTargets(pass('fused', 0.69, 0.93), singles, { ...targets, recallGainFloor: 0.005 });
    expect(above[1]).toMatchObject({ met: false, floor: { bar: 'best single + 0.005 = 0.9237', met: true } });
    expect(checkPasses(above)).toBe(true);
    expect(formatVerdicts(above)[1]).toBe(
      'MISSED fused Recall@100 >= best single + 0.015: fused 0.9300 vs trigram 0.9187 + 0.015 = 0.9337; TARGET NOT MET, only the CI floor (best single + 0.005 = 0.9237) holds',
    );
    const below = checkTargets(pass('fused', 0.69, 0.92), singles, { ...targets, recallGainFloor: 0.005 });
    expect(below[1].floor).toEqual({ bar: 'best single + 0.005 = 0.9237', met: false });
    expect(checkPasses(below)).toBe(false);
    // A floor never excuses another target.
    expect(checkPasses(checkTargets(pass('fused', 0.69, 0.93, 6000), singles, { ...targets, recallGainFloor: 0.005 }))).toBe(false);
    // A met target carries no floor.
    expect(checkTargets(pass('fused', 0.69, 0.94), singles, { ...targets, recallGainFloor: 0.005 })[1].floor).toBeUndefined();
  });

  it('checkTargets - a fused pass over the time target but under the CI ceiling is accepted, still reported as MISSED; over it, or without one, fails', () => {
    const slow = checkTargets(pass('fused', 0.69, 0.94, 6200), singles, { ...targets, fusedSecondsCeiling: 7.5 });
    expect(slow[3]).toMatchObject({ met: false, floor: { bar: 'fused pass under 7.5 s', met: true } });
    expect(checkPasses(slow)).toBe(true);
    expect(formatVerdicts(slow)[3]).toBe('MISSED fused pass under 5 s: 150 queries in 6.20 s; TARGET NOT MET, only the CI floor (fused pass under 7.5 s) holds');
    expect(checkPasses(checkTargets(pass('fused', 0.69, 0.94, 7600), singles, { ...targets, fusedSecondsCeiling: 7.5 }))).toBe(false);
    expect(checkPasses(checkTargets(pass('fused', 0.69, 0.94, 6200), singles, targets))).toBe(false);
    expect(checkTargets(pass('fused', 0.69, 0.94, 4000), singles, { ...targets, fusedSecondsCeiling: 7.5 })[3].floor).toBeUndefined();
  });

  it('parseEvalOptions - takes a fused-pass ceiling only above the time target', () => {
    const base = ['--corpus', 'c', '--queries', 'q', '--qrels', 'r', '--out', 'o'];
    expect(parseEvalOptions(base, '/').targets.fusedSecondsCeiling).toBeNull();
    expect(parseEvalOptions([...base, '--fused-seconds-ceiling', '7.5'], '/').targets.fusedSecondsCeiling).toBe(7.5);
    expect(() => parseEvalOptions([...base, '--fused-seconds-ceiling', '4'], '/')).toThrow(/--fused-seconds-ceiling must be a number above --max-fused-seconds \(5\)/);
  });

  it('parseEvalOptions - takes a recall floor only below the recall target', () => {
    const base = ['--corpus', 'c', '--queries', 'q', '--qrels', 'r', '--out', 'o'];
    expect(parseEvalOptions(base, '/').targets.recallGainFloor).toBeNull();
    expect(parseEvalOptions([...base, '--recall-gain-floor', '0.005'], '/').targets.recallGainFloor).toBe(0.005);
    expect(() => parseEvalOptions([...base, '--recall-gain-floor', '0.02'], '/')).toThrow(UsageError);
    expect(() => parseEvalOptions([...base, '--recall-gain-floor', 'x'], '/')).toThrow(/--recall-gain-floor/);
  });
});

describe('profile app with a resource-hungry engine', () => {
  let nats: NatsHandle;
  let bus: Bus;
  let dir: string;
  const log = createRootLogger({ name: 'test', level: 'silent' });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chorus-profiles-'));
    writeFixture(dir);
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'eval-profiles-test' }, log);
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('startProfiles - serves bm25 at once and wordvec only once its word vectors have loaded', async () => {
    const config = parseChorusConfig({ CHORUS_CORPUS: join(dir, 'corpus.jsonl') }, ROOT);
    let release!: (v: WordVectors) => void;
    const vectors = new Promise<WordVectors>((resolve) => (release = resolve));
    let onSettled!: (error?: unknown) => void;
    const settled = new Promise<unknown>((resolve) => (onSettled = resolve));
    const component = await startProfiles(bus, config, log, ['bm25', 'wordvec'], { loaders: { wordVectors: () => vectors }, onSettled });
    const client = new ProfileClient(bus);
    // startProfiles resolved: bm25 already serves, while the vectors are still loading.
    await waitForAnswer(client, 'bm25');
    await expect(client.search('wordvec', { text: 'fusion', limit: 3 }, 500)).rejects.toBeInstanceOf(NoRespondersError);

    release(createWordVectors(2, [['fusion', [1, 0]], ['ranks', [0.9, 0.1]], ['stemmer', [0, 1]], ['words', [0.1, 0.9]]]));
    expect(await settled).toBeUndefined();
    const reply = await client.search('wordvec', { text: 'fusion', limit: 3 }, 2000);
    expect(reply.hits[0].id).toBe('d1');
    await component.close();
  });

  it('startProfiles - leaves a profile unavailable, and says why, when its resource cannot load', async () => {
    const config = parseChorusConfig({ CHORUS_CORPUS: join(dir, 'corpus.jsonl') }, ROOT);
    let onSettled!: (error?: unknown) => void;
    const settled = new Promise<unknown>((resolve) => (onSettled = resolve));
    const component = await startProfiles(bus, config, log, ['wordvec'], {
      loaders: { wordVectors: () => Promise.reject(new Error('no such file')) },
      onSettled,
    });
    expect(await settled).toEqual(new Error('no such file'));
    await expect(new ProfileClient(bus).search('wordvec', { text: 'fusion', limit: 3 }, 500)).rejects.toBeInstanceOf(NoRespondersError);
    await component.close();
  });
});

async function waitForAnswer(client: ProfileClient, profile: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await client.search(profile, { text: 'probe', limit: 1 }, 500).then(() => true, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${profile} never answered`);
}
