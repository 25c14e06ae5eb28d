import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import {
  COMPLEXITIES,
  DEGRADATION_REASONS,
  ENTITY_KINDS,
  INTENTS,
  MESSAGE_TYPES,
  MODALITIES,
  ROUTES,
  WORKFLOW_STATUSES,
  createEnvelope,
  newMessageId,
  type MessageType,
} from '@chorus/envelope';

/**
 * Shared by the fuzz suites (test/fuzz-*.int-spec.ts): valid envelopes of every message type
 * (payloads that satisfy libs/envelope/src/payloads), the mutations applied to them, raw bodies,
 * subject tokens, and the checks and crash watcher the suites share. Wire rules are restated here
 * on purpose (not imported) so the suites check the contract independently of the code under test.
 */

export const TENANT_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const CID_RE = /^[A-Za-z0-9_-]{1,128}$/;

// ---------------------------------------------------------------- tokens and subjects

export const tenantArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('default', 'acme', 'fuzz') },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,62}$/) },
);
const agentArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('fuzzer', 'intent', 'planner', 'search', 'responder', 'ingress', 'hub') },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_-]{0,62}$/) },
);
const profileArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('bm25', 'trigram') }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_-]{0,31}$/) });

/** A subject token NATS accepts for publishing (no `.`, `*`, `>` or whitespace) that is not valid for `pattern`. */
function invalidToken(pattern: RegExp, specials: string[]): fc.Arbitrary<string> {
  const safe = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).filter((s) => !/[.*>\s]/u.test(s) && !pattern.test(s));
  return fc.oneof(fc.constantFrom(...specials), safe);
}
const invalidTenant = invalidToken(TENANT_RE, ['UPPER', '_lead', '-lead', 'a'.repeat(64), 'tén', '%41', '$G', '__proto__', 'constructor']);
const invalidType = invalidToken(/^(query|classification_result|execution_plan|tool_results|response|status_update|orchestration_command)$/, [
  'QUERY',
  'bogus',
  '__proto__',
  'constructor',
  'toString',
  'query_',
  'responses',
]);
const invalidCid = invalidToken(CID_RE, ['x'.repeat(129), 'é', '%', 'a+b', '$', 'a:b']);

export interface SubjectParts {
  tenant: string;
  type: string;
  cid: string;
  /** 5 tokens normally; 3, 4 or 6 for malformed subjects. */
  shape: 3 | 4 | 5 | 6;
}

export function subjectOf(p: SubjectParts): string {
  const tokens = ['chorus', 'wf', p.tenant, p.type, p.cid, 'extra'].slice(0, p.shape);
  return tokens.join('.');
}

/** Where the dead letter of a message on `subject` must land: the source's tokens, `_invalid` where invalid. */
export function expectedDeadLetterSubject(subject: string): string {
  const [, , tenant, type] = subject.split('.');
  const okTenant = tenant !== undefined && TENANT_RE.test(tenant) ? tenant : '_invalid';
  const okType = type !== undefined && (MESSAGE_TYPES as readonly string[]).includes(type) ? type : '_invalid';
  return `chorus.dlq.${okTenant}.${okType}`;
}

/** Every workflow subject pattern, with valid and invalid tokens, and malformed shapes. */
export const anySubjectArb: fc.Arbitrary<SubjectParts> = fc.record({
  tenant: fc.oneof({ weight: 3, arbitrary: tenantArb }, { weight: 1, arbitrary: invalidTenant }),
  type: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...MESSAGE_TYPES) }, { weight: 1, arbitrary: invalidType }),
  cid: fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/) }, { weight: 1, arbitrary: invalidCid }),
  shape: fc.constantFrom<SubjectParts['shape']>(5, 5, 5, 5, 3, 4, 6),
});

// ---------------------------------------------------------------- valid payloads

/** Free text: ASCII, graphemes (emoji, RTL, combining marks) or any code point (lone surrogates included). */
const text = (maxLength: number, minLength = 0) =>
  fc.oneof(
    fc.string({ minLength, maxLength }),
    fc.string({ unit: 'grapheme', minLength, maxLength }),
    fc.string({ unit: 'binary', minLength, maxLength }),
  );
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });

const queryPayload = fc.record(
  {
    query: text(120, 1).filter((s) => /\S/.test(s)),
    session_id: opt(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/)),
    profiles: opt(fc.uniqueArray(profileArb, { maxLength: 3 })),
    top_k: fc.integer({ min: 1, max: 100 }),
    require_all: fc.boolean(),
  },
  { requiredKeys: ['query', 'top_k', 'require_all'] },
);
const fusion = fc.record(
  {
    k: fc.double({ min: 0, max: 1000, noNaN: true }),
    rank_window: fc.integer({ min: 1, max: 10_000 }),
    // Weights are numbers from 0 to 1000 (a negative one would rank a document below those no
    // profile returned); the mutations below break that rule on purpose.
    weights: fc.dictionary(profileArb, fc.double({ min: 0, max: 10, noNaN: true }), { maxKeys: 3 }),
  },
  { requiredKeys: ['k', 'rank_window'] },
);
const planned = fc.record({ name: profileArb, confidence: unit, reason: text(80) });
const degradation = fc.record({ profile: profileArb, reason: fc.constantFrom(...DEGRADATION_REASONS), detail: text(80) });
const ranks = fc.dictionary(profileArb, fc.integer({ min: 1, max: 100 }), { maxKeys: 3 });
const errorDetails = fc.record({
  error_type: fc.stringMatching(/^[A-Z][A-Z0-9_]{0,63}$/),
  error_message: text(200),
  retry_possible: fc.boolean(),
});

/** A valid payload for each message type; `deadline` feeds the plan's search deadline. */
export function payloadArb(type: MessageType, deadline: string): fc.Arbitrary<Record<string, unknown>> {
  switch (type) {
    case 'query':
      return queryPayload;
    case 'classification_result':
      return fc.record({
        request: queryPayload,
        search_text: text(200),
        intent: fc.constantFrom(...INTENTS),
        entities: fc.array(fc.record({ text: text(40), kind: fc.constantFrom(...ENTITY_KINDS), start: fc.nat(200), end: fc.nat(200) }), { maxLength: 4 }),
        modality: fc.constantFrom(...MODALITIES),
        complexity: fc.constantFrom(...COMPLEXITIES),
        confidence: unit,
        explicit_profiles: fc.array(profileArb, { maxLength: 2 }),
        signals: fc.array(text(30), { maxLength: 4 }),
      });
    case 'execution_plan':
      return fc.record(
        {
          request: queryPayload,
          search_text: text(200),
          route: fc.constantFrom(...ROUTES),
          profiles: fc.array(planned, { maxLength: 3 }),
          alternatives: fc.array(planned, { maxLength: 2 }),
          top_k: fc.integer({ min: 1, max: 100 }),
          fusion,
          search_deadline: fc.constant(deadline),
          require_all: fc.boolean(),
          explanation: text(120),
        },
        { requiredKeys: ['request', 'search_text', 'route', 'profiles', 'alternatives', 'top_k', 'fusion', 'search_deadline', 'explanation'] },
      );
    case 'tool_results':
      return fc.record(
        {
          request: queryPayload,
          search_text: text(200),
          results: fc.array(
            fc.record({ id: text(40, 1), title: text(60), text: text(300), score: fc.double({ min: 0, max: 10, noNaN: true }), ranks }),
            { maxLength: 5 },
          ),
          profiles_used: fc.array(profileArb, { maxLength: 3 }),
          degraded: fc.array(degradation, { maxLength: 2 }),
          fusion,
          candidates: fc.dictionary(profileArb, fc.nat(100), { maxKeys: 2 }),
          took_ms: fc.nat(10_000),
        },
        { requiredKeys: ['request', 'search_text', 'results', 'profiles_used', 'degraded', 'fusion', 'took_ms'] },
      );
    case 'response':
      return fc.record({
        query: text(200),
        answer: text(300),
        results: fc.array(
          fc.record({ rank: fc.integer({ min: 1, max: 100 }), id: text(40), title: text(60), snippet: text(300), score: fc.double({ min: 0, max: 10, noNaN: true }), ranks }),
          { maxLength: 5 },
        ),
        provenance: fc.record({
          sources: fc.array(fc.record({ sentence: text(100), document_id: text(40), result_rank: fc.integer({ min: 1, max: 10 }) }), { maxLength: 3 }),
          profiles_used: fc.array(profileArb, { maxLength: 3 }),
          degraded: fc.array(degradation, { maxLength: 2 }),
          fusion,
          method: text(20),
        }),
      });
    case 'status_update':
      return fc.record(
        {
          workflow_status: fc.constantFrom(...WORKFLOW_STATUSES),
          previous_status: opt(fc.constantFrom(...WORKFLOW_STATUSES)),
          step: opt(fc.constantFrom(...MESSAGE_TYPES)),
          reason: opt(text(200)),
          error: opt(errorDetails),
        },
        { requiredKeys: ['workflow_status'] },
      );
    case 'orchestration_command':
      return fc.record({ command: fc.constantFrom('cancel', 'retry'), reason: opt(text(200)) }, { requiredKeys: ['command'] });
  }
}

/** What a valid envelope is built from; the deadline is relative to when it is published. */
export interface EnvelopeSpec {
  type: MessageType;
  tenant: string;
  agent: string;
  status: 'success' | 'pending' | 'error';
  error: { error_type: string; error_message: string; retry_possible: boolean };
  causation: boolean;
  targetAgent: string | null;
  nextSteps: string[];
  attempt: number;
  deadlineMs: number;
  payload: Record<string, unknown>;
}

export const SEARCH_DEADLINE_PLACEHOLDER = '__SEARCH_DEADLINE__';

export const envelopeSpecArb: fc.Arbitrary<EnvelopeSpec> = fc
  .record({
    type: fc.constantFrom(...MESSAGE_TYPES),
    tenant: tenantArb,
    agent: agentArb,
    status: fc.constantFrom<EnvelopeSpec['status']>('success', 'success', 'pending', 'error'),
    error: errorDetails,
    causation: fc.boolean(),
    targetAgent: opt(agentArb),
    nextSteps: fc.array(agentArb, { maxLength: 4 }),
    attempt: fc.integer({ min: 1, max: 100 }),
    deadlineMs: fc.integer({ min: 700, max: 1500 }),
  })
  .chain((s) => payloadArb(s.type, SEARCH_DEADLINE_PLACEHOLDER).map((payload) => ({ ...s, payload })));

/** A concrete, valid envelope (plain JSON object) for `spec`, published now with correlation id `cid`. */
export function buildEnvelope(spec: EnvelopeSpec, cid: string, now = new Date()): Record<string, unknown> {
  const deadline = new Date(now.getTime() + spec.deadlineMs).toISOString();
  const payload = JSON.parse(JSON.stringify(spec.payload).replace(`"${SEARCH_DEADLINE_PLACEHOLDER}"`, JSON.stringify(deadline)));
  const env = createEnvelope({
    messageType: spec.type,
    correlationId: cid,
    tenantId: spec.tenant,
    agent: spec.agent,
    payload: payload as never,
    deadline,
    status: spec.status,
    targetAgent: spec.targetAgent,
    nextSteps: spec.nextSteps,
    now,
  }) as unknown as Record<string, unknown>;
  env.attempt = spec.attempt;
  if (spec.causation) env.causation_id = newMessageId();
  if (spec.status === 'error') env.error_details = spec.error;
  return JSON.parse(JSON.stringify(env));
}

// ---------------------------------------------------------------- JSON helpers

/** Sets an own property, even `__proto__` (which plain assignment would turn into a prototype change). */
export function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

/** The deep-nesting text `{"a":{"a":…1…}}` or `[[…1…]]`, built as text (no recursion). */
export function deepText(depth: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/** Every field error of a dead letter or an HTTP 400 is `{field: string, messages: string[]}` with messages in it. */
export function isFieldErrorList(errors: unknown): boolean {
  return (
    Array.isArray(errors) &&
    errors.every(
      (e) =>
        typeof e === 'object' &&
        e !== null &&
        // A body's own key may be '' ("property  should not exist"): still the field's name.
        typeof (e as { field?: unknown }).field === 'string' &&
        Array.isArray((e as { messages?: unknown }).messages) &&
        (e as { messages: unknown[] }).messages.length > 0 &&
        (e as { messages: unknown[] }).messages.every((m) => typeof m === 'string' && m.length > 0),
    )
  );
}

/** True when some error names one of `fields` (or a field inside it). */
export function namesAnyField(errors: Array<{ field: string }>, fields: readonly string[]): boolean {
  return errors.some((e) => fields.some((f) => e.field === f || e.field.startsWith(`${f}.`)));
}

/** The sum of a Prometheus counter's samples whose labels include all of `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// ---------------------------------------------------------------- mutations of a valid envelope

/** An envelope being mutated, with what must happen to its bytes and subject once serialised. */
export interface Draft {
  env: Record<string, unknown>;
  subject: SubjectParts;
  /** Sentinel string values to replace by raw JSON text (deep nesting, NaN, 1e999). */
  raw: Array<[string, string]>;
  /** A sentinel to replace by raw bytes (invalid UTF-8). */
  bytes?: [string, Uint8Array];
  /** A Nats-Msg-Id to publish with. */
  msgId?: string;
  /** The deadline is so far away that the test cancels the workflow to see it end. */
  needsCancel?: boolean;
  /** Fields a mutation broke on purpose: a later, possibly valid, value must not repair them. */
  touched?: Set<string>;
}

/**
 * One change to a draft. `invalid`: the envelope must be rejected with an error naming one of these
 * fields (or a field inside one); null: the change may or may not keep it valid (the parser says).
 */
export interface Mutation {
  label: string;
  invalid: readonly string[] | null;
  apply(d: Draft): void;
}

const REQUIRED_TOP = ['message_id', 'correlation_id', 'tenant_id', 'agent', 'message_type', 'status', 'timestamp', 'deadline', 'attempt', 'payload', 'next_steps', 'schema_version'];
const BAD_TOP: Record<string, unknown[]> = {
  message_id: [42, 'not-a-uuid', '6f1c3e9a-8b2d-4c1e-9f3a-2b3c4d5e6f70', {}],
  correlation_id: [42, '', 'a b', 'x'.repeat(129), null],
  causation_id: [42, 'nope', {}],
  tenant_id: [42, 'UPPER', '', null],
  agent: [42, 'Agent', '', null],
  target_agent: [42, 'Bad Agent', {}],
  message_type: [42, 'QUERY', 'bogus', null, '__proto__'],
  status: ['ok', 42, null, true],
  timestamp: ['yesterday', 42, '2026-13-01T00:00:00Z', null, '2026-02-30T00:00:00Z', '2026-11-30T10:30:00+01'],
  deadline: ['soon', 0, null, '2026-02-30T00:00:00Z', '2026-06-30T23:59:60Z'],
  attempt: [0, 101, 1.5, '1', null, -1],
  payload: [42, 'x', [], null, true],
  next_steps: ['intent', [42], ['Bad'], Array(17).fill('intent'), null],
  error_details: [42, 'x', [], { error_type: 'lower', error_message: 'm', retry_possible: true }],
  schema_version: [2, '1', null, 0],
  traceparent: ['bogus', 42, `00-${'0'.repeat(31)}-x`],
};
interface PayloadRules {
  required: string[];
  bad: Record<string, unknown[]>;
  /** String fields with a maximum length. */
  bounded: Array<[string, number]>;
  /** Numeric fields (for NaN / 1e999 as raw text). */
  numbers: string[];
  /** Arrays of nested objects (for thousands of invalid items). */
  arrays: string[];
  /** A free-text field (for unicode). */
  text: string;
}
const PAYLOAD_RULES: Record<MessageType, PayloadRules> = {
  query: {
    required: ['query', 'top_k', 'require_all'],
    bad: { query: ['', '   ', 42, null], top_k: [0, 101, 1.5, '5'], require_all: ['yes', 1, null], profiles: [['BM25'], 'bm25', ['bm25', 'bm25']], session_id: ['has space', 42] },
    bounded: [['query', 4000]],
    numbers: ['top_k'],
    arrays: [],
    text: 'query',
  },
  classification_result: {
    required: ['request', 'search_text', 'intent', 'entities', 'modality', 'complexity', 'confidence', 'explicit_profiles', 'signals'],
    bad: { intent: ['x', 42], confidence: [2, -1, 'high'], entities: ['x', [{}]], request: [42, {}], search_text: [42], explicit_profiles: [['BAD']], signals: [[1]] },
    bounded: [['search_text', 8000]],
    numbers: ['confidence'],
    arrays: ['entities'],
    text: 'search_text',
  },
  execution_plan: {
    required: ['request', 'search_text', 'route', 'profiles', 'alternatives', 'top_k', 'fusion', 'search_deadline', 'explanation'],
    bad: {
      route: ['FAST'],
      top_k: [0, 101],
      fusion: [42, { k: -1, rank_window: 0 }, { k: 60, rank_window: 100, weights: { bm25: -1 } }, { k: 60, rank_window: 100, weights: { trigram: 1001, bm25: 1 } }, { k: 60, rank_window: 100, weights: { bm25: 'x' } }],
      search_deadline: ['soon', 42],
      profiles: [[{ name: 'BAD', confidence: 2, reason: 1 }]],
    },
    bounded: [['search_text', 8000], ['explanation', 2000]],
    numbers: ['top_k'],
    arrays: ['profiles', 'alternatives'],
    text: 'explanation',
  },
  tool_results: {
    required: ['request', 'search_text', 'results', 'profiles_used', 'degraded', 'fusion', 'took_ms'],
    bad: { results: ['x', [{}]], took_ms: [-1, 'fast'], degraded: [[{ profile: 'x', reason: 'bad' }]], profiles_used: [['BAD']], fusion: [{ k: 60, rank_window: 100, weights: { bm25: -0.5 } }] },
    bounded: [['search_text', 8000]],
    numbers: ['took_ms'],
    arrays: ['results', 'degraded'],
    text: 'search_text',
  },
  response: {
    required: ['query', 'answer', 'results', 'provenance'],
    bad: { answer: [42], results: [[{ rank: 0 }]], provenance: [42, {}] },
    bounded: [['answer', 8000], ['query', 8000]],
    numbers: [],
    arrays: ['results', 'provenance.sources'],
    text: 'answer',
  },
  status_update: {
    required: ['workflow_status'],
    bad: { workflow_status: ['done', 42, null], step: ['bogus'], previous_status: ['x'], error: [{ error_type: 1 }] },
    bounded: [['reason', 2000]],
    numbers: [],
    arrays: [],
    text: 'reason',
  },
  orchestration_command: {
    required: ['command'],
    bad: { command: ['stop', 42, null], reason: [42] },
    bounded: [['reason', 2000]],
    numbers: [],
    arrays: [],
    text: 'reason',
  },
};

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
/** ISO 8601 forms the validator accepts but `Date.parse` cannot read. */
export const UNREADABLE_ISO_DATES = ['20261130T103010Z', '2026-W48-1', '2026-334', '2026-11-30T10:30:10,5Z'];
const NASTY_TEXT = ['\u0000', '\u202eevil', 'e\u0301\u0301\u0301', '\ud800', '\udfff\ud800', '\ufeffbom', '👩‍👩‍👧‍👦', 'ﷺ', '\u2028\u2029', '%s%n%x', "'; DROP TABLE x; --"];

const short = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 40);
const clone = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

function objectAt(root: Record<string, unknown>, path: string[]): Record<string, unknown> | null {
  let at: unknown = root;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return null;
    at = (at as Record<string, unknown>)[key];
  }
  return typeof at === 'object' && at !== null && !Array.isArray(at) ? (at as Record<string, unknown>) : null;
}

/**
 * Sets (or, with DROP, deletes) the value at a dotted path; a no-op when the parent is not an object.
 * A `soft` change (a value that may be valid) only replaces a field that is there and untouched.
 */
function setAt(d: Draft, dotted: string, value: unknown, soft = false): void {
  const path = dotted.split('.');
  const parent = objectAt(d.env, path.slice(0, -1));
  const key = path[path.length - 1];
  const touched = (d.touched ??= new Set());
  if (!parent || (soft && (!(key in parent) || [...touched].some((t) => dotted === t || dotted.startsWith(`${t}.`))))) return;
  if (!soft) touched.add(dotted);
  if (value === DROP) delete parent[key];
  else defineKey(parent, key, value);
}
const DROP = Symbol('drop');

/** Splices raw JSON text in at a dotted path; `soft` as for {@link setAt} (raw text that may be valid). */
function rawAt(d: Draft, dotted: string, raw: string, soft = false): void {
  const sentinel = `__RAW_${d.raw.length}__`;
  d.raw.push([sentinel, raw]);
  setAt(d, dotted, sentinel, soft);
}

const m = (label: string, invalid: readonly string[] | null, apply: (d: Draft) => void): Mutation => labelled({ label, invalid, apply }, label);

/** The mutations that apply to an envelope of `type`. */
export function mutationArb(type: MessageType): fc.Arbitrary<Mutation> {
  const rules = PAYLOAD_RULES[type];
  const p = (f: string) => `payload.${f}`;
  const numeric = ['attempt', 'schema_version', ...rules.numbers.map(p)];
  const arbs: Array<fc.Arbitrary<Mutation>> = [
    fc.constantFrom(...REQUIRED_TOP).map((f) => m(`drop ${f}`, [f], (d) => setAt(d, f, DROP))),
    fc.constantFrom(...rules.required).map((f) => m(`drop ${p(f)}`, [p(f)], (d) => setAt(d, p(f), DROP))),
    fc.constantFrom(...Object.keys(BAD_TOP)).chain((f) => fc.constantFrom(...BAD_TOP[f]).map((v) => m(`${f} = ${short(v)}`, [f], (d) => setAt(d, f, clone(v))))),
    fc.constantFrom(...Object.keys(rules.bad)).chain((f) => fc.constantFrom(...rules.bad[f]).map((v) => m(`${p(f)} = ${short(v)}`, [p(f)], (d) => setAt(d, p(f), clone(v))))),
    // Strings over their limit, up to a few hundred kilobytes.
    fc.tuple(fc.constantFrom<[string, number]>(...rules.bounded.map(([f, n]) => [p(f), n] as [string, number]), ['agent', 63]), fc.integer({ min: 1, max: 300_000 })).map(([[f, n], extra]) =>
      m(`${f} is ${n + extra} chars`, [f], (d) => setAt(d, f, 'a'.repeat(n + extra))),
    ),
    // Deep nesting in place of a field.
    fc.tuple(fc.constantFrom('payload', 'next_steps', 'attempt', p(rules.required[0])), fc.integer({ min: 2, max: 6000 }), fc.constantFrom<'object' | 'array'>('object', 'array')).map(([f, depth, kind]) =>
      m(`${f} nested ${depth} deep (${kind})`, [f], (d) => rawAt(d, f, deepText(depth, kind))),
    ),
    // Numbers JSON cannot carry (invalid JSON) or that overflow to ±Infinity.
    fc.tuple(fc.constantFrom(...numeric), fc.constantFrom('NaN', 'Infinity', '-Infinity', '+1', '01', '.5', '0x10')).map(([f, t]) => m(`${f} = ${t} (raw)`, ['$'], (d) => rawAt(d, f, t))),
    fc.tuple(fc.constantFrom(...numeric), fc.constantFrom('1e999', '-1e999')).map(([f, t]) => m(`${f} = ${t} (raw)`, [f], (d) => rawAt(d, f, t))),
    // Valid spellings of a number: soft, so they never hide an earlier mutation's invalid value.
    fc.tuple(fc.constantFrom(...numeric), fc.constantFrom('-0', '1.0', '1E0')).map(([f, t]) => m(`${f} = ${t} (raw)`, null, (d) => rawAt(d, f, t, true))),
    // Prototype-pollution keys, and a missing field offered through __proto__.
    fc.tuple(fc.constantFrom('', 'payload'), fc.constantFrom(...PROTO_KEYS), fc.jsonValue({ maxDepth: 2 })).map(([where, key, v]) =>
      m(`${where ? `${where}.` : ''}${key} = ${short(v)}`, null, (d) => setAt(d, where ? `${where}.${key}` : key, v)),
    ),
    fc.constantFrom('status', 'schema_version', 'attempt', 'message_type', p(rules.required[0])).map((f) =>
      m(`${f} only through __proto__`, [f], (d) => {
        const path = f.split('.');
        const parent = objectAt(d.env, path.slice(0, -1));
        const key = path[path.length - 1];
        if (!parent || !(key in parent)) return;
        const value = parent[key];
        delete parent[key];
        (d.touched ??= new Set()).add(f);
        defineKey(parent, '__proto__', { [key]: value });
      }),
    ),
    // Unicode in free text; odd but well-formed dates.
    fc.oneof(fc.constantFrom(...NASTY_TEXT), fc.string({ unit: 'binary', maxLength: 200 })).map((s) => m(`${p(rules.text)} = ${short(s)}`, null, (d) => setAt(d, p(rules.text), s, true))),
    fc.integer({ min: 25, max: 400 }).map((days) =>
      m(`deadline in ${days} days`, null, (d) => {
        setAt(d, 'deadline', new Date(Date.now() + days * 86_400_000).toISOString(), true);
        d.needsCancel = true;
      }),
    ),
    fc.integer({ min: 1, max: 100_000 }).map((s) => m(`deadline ${s} s ago`, null, (d) => setAt(d, 'deadline', new Date(Date.now() - s * 1000).toISOString(), true))),
    fc.tuple(fc.constantFrom('deadline', 'timestamp'), fc.constantFrom(...UNREADABLE_ISO_DATES)).map(([f, v]) => m(`${f} = ${v}`, null, (d) => setAt(d, f, v, true))),
    fc.constantFrom('1970-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2026-11-30T10:30:10+14:00').map((v) => m(`timestamp = ${v}`, null, (d) => setAt(d, 'timestamp', v, true))),
    // Subject tokens that do not match the body, or a malformed subject.
    fc.oneof(
      fc.constantFrom('other-tenant', 'UPPER').map((t) => m(`subject tenant ${t}`, ['$subject', 'tenant_id'], (d) => (d.subject = { ...d.subject, tenant: t }))),
      fc.constantFrom<string>(...MESSAGE_TYPES.filter((t) => t !== type), 'bogus').map((t) => m(`subject type ${t}`, ['$subject', 'message_type'], (d) => (d.subject = { ...d.subject, type: t }))),
      fc.constantFrom('other-cid', 'x'.repeat(129)).map((c) => m(`subject cid ${c.slice(0, 12)}`, ['$subject', 'correlation_id'], (d) => (d.subject = { ...d.subject, cid: c }))),
      fc.constantFrom<SubjectParts['shape']>(4, 6).map((n) => m(`subject of ${n} tokens`, ['$subject'], (d) => (d.subject = { ...d.subject, shape: n }))),
    ),
    fc.tuple(fc.constantFrom('agent', p(rules.text)), fc.constantFrom([0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82])).map(([f, b]) =>
      m(`${f} holds invalid UTF-8 ${b.map((x) => x.toString(16)).join(' ')}`, ['$'], (d) => {
        d.bytes = ['__BYTES__', Uint8Array.from(b)];
        setAt(d, f, '__BYTES__');
      }),
    ),
    // Large but legal: an unknown payload field that agents carry forward.
    fc.constantFrom(1_000, 100_000, 300_000).map((n) => m(`payload.junk is ${n} chars`, null, (d) => setAt(d, 'payload.junk', 'j'.repeat(n)))),
    fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.stringMatching(/^[!-~]{1,40}$/)).map((id) => m(`Nats-Msg-Id ${id}`, null, (d) => (d.msgId = id))),
  ];
  if (rules.arrays.length > 0) {
    // Thousands of invalid items: validation work and the error list grow with them.
    arbs.push(
      fc.tuple(fc.constantFrom(...rules.arrays), fc.integer({ min: 1, max: 4000 })).map(([f, n]) =>
        m(`${p(f)} has ${n} empty items`, [p(f)], (d) => setAt(d, p(f), Array.from({ length: n }, () => ({})))),
      ),
    );
  }
  return fc.oneof(...arbs);
}

/** The bytes of a draft: JSON, with raw text and raw bytes spliced in. */
export function serialize(d: Draft): Uint8Array {
  let body = JSON.stringify(d.env);
  for (const [sentinel, raw] of d.raw) body = body.replace(JSON.stringify(sentinel), () => raw);
  const encoder = new TextEncoder();
  if (!d.bytes || !body.includes(d.bytes[0])) return encoder.encode(body);
  const [sentinel, inject] = d.bytes;
  const at = body.indexOf(sentinel);
  return Buffer.concat([encoder.encode(body.slice(0, at)), inject, encoder.encode(body.slice(at + sentinel.length))]);
}

// ---------------------------------------------------------------- arbitrary bodies

const ENVELOPE_KEYS = [...REQUIRED_TOP, 'causation_id', 'target_agent', 'error_details', 'traceparent'];

/** Bytes that are not an envelope: random bytes, any JSON, any text, partial envelopes, classic junk. */
export const rawBodyArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => Buffer.from(s)),
  fc.dictionary(fc.constantFrom(...ENVELOPE_KEYS, ...PROTO_KEYS), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }).map((o) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) defineKey(out, k, v);
    return Buffer.from(JSON.stringify(out));
  }),
  fc.constantFrom('', ' ', 'null', '[]', '{}', '""', '0', 'true', '\ufeff{}', '{"message_type":"query"}', '{"attempt":NaN}', '{"a":Infinity}', '{', '}{', '[{}]', '{"__proto__":{"status":"success"}}').map((s) => Buffer.from(s)),
  fc.tuple(fc.integer({ min: 1, max: 5000 }), fc.constantFrom<'object' | 'array'>('object', 'array')).map(([n, kind]) => Buffer.from(deepText(n, kind))),
);

// ---------------------------------------------------------------- crashes and reporting

/**
 * Records unhandled rejections and uncaught exceptions of this process, where the fixture runs
 * Chorus: each one would end a production process (Node's default). Jest's listeners are set aside
 * meanwhile, so that a crash fails the property run that caused it instead of every test of the
 * file. They live on the real process object: a test sees a copy of it, so the real one is reached
 * through a function of Node's own realm.
 */
export function watchCrashes(): { errors: unknown[]; since(mark: number): unknown[]; stop(): void } {
  const real = (EventEmitter as unknown as { constructor: FunctionConstructor }).constructor('return process')() as NodeJS.Process;
  const errors: unknown[] = [];
  const events = ['unhandledRejection', 'uncaughtException'] as const;
  const saved = events.map((e) => [e, [...real.rawListeners(e)]] as const);
  const record = (e: unknown) => void errors.push(e);
  for (const e of events) {
    real.removeAllListeners(e);
    real.on(e, record);
  }
  return {
    errors,
    since: (mark) => errors.slice(mark),
    stop: () => {
      for (const [e, listeners] of saved) {
        real.removeListener(e, record);
        for (const l of listeners) real.on(e, l as (...args: unknown[]) => void);
      }
    },
  };
}

/** Describes a crash for a failure message. */
export function describeCrash(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}\n${(e.stack ?? '').split('\n').slice(1, 4).join('\n')}` : String(e);
}

/** Gives a generated value a short description in fast-check's counterexamples. */
export function labelled<T extends object>(value: T, label: string): T {
  Object.defineProperty(value, fc.toStringMethod, { value: () => label, enumerable: false });
  return value;
}

/** A short, printable preview of a body. */
export function preview(body: Uint8Array, max = 80): string {
  const text = Buffer.from(body.subarray(0, max)).toString('utf8');
  return `${JSON.stringify(text)}${body.length > max ? `… (${body.length} bytes)` : ''}`;
}
