import { correlationIdForRetry, createEnvelope, deriveEnvelope, idempotencyKey, newMessageId, type Envelope } from '@chorus/envelope';
import { applyDeadline, applyDroppedDuplicate, applyEnvelope, MAX_FINISHED_KEYS, recordAnnouncement } from './workflow.transitions';
import { MAX_COMMAND_STEPS, queryStreamSeq, retryNotStarted, retryWouldStart } from './workflow.retry';
import type { Transition } from './workflow.steps';
import { toView, type WorkflowRecord } from './workflow.record';

const t0 = new Date('2026-11-30T10:00:00.000Z');
let seq = 0;

function query(): Envelope {
  return createEnvelope({
    messageType: 'query',
    correlationId: 'wf-1',
    tenantId: 'acme',
    agent: 'ingress',
    deadline: new Date(t0.getTime() + 10_000),
    payload: { query: 'hello', top_k: 5, require_all: false },
    now: t0,
  });
}

function child(parent: Envelope, messageType: Envelope['message_type'], agent: string, payload: object, extra: Partial<Envelope> = {}): Envelope {
  return { ...deriveEnvelope(parent, { messageType, agent, payload: payload as never, now: new Date(Date.parse(parent.timestamp) + 20) }), ...extra };
}

function apply(record: WorkflowRecord | null, env: Envelope, part?: string, streamSeq = ++seq): Transition {
  return applyEnvelope(record, env, { idempotencyKey: idempotencyKey(env.correlation_id, env.message_type, env.agent, part), streamSeq }, t0);
}

const tools = (degraded: object[] = []) => ({ request: {}, search_text: 'hello', results: [], profiles_used: ['bm25'], degraded, fusion: { k: 60, rank_window: 100 }, took_ms: 1 });

/** One workflow's envelopes, query to response. */
function chain(): [Envelope, Envelope, Envelope, Envelope, Envelope] {
  const q = query();
  const c = child(q, 'classification_result', 'intent', {});
  const p = child(c, 'execution_plan', 'planner', {});
  const t = child(p, 'tool_results', 'search', tools());
  const r = child(t, 'response', 'responder', { query: 'hello', answer: 'a', results: [], provenance: {} });
  return [q, c, p, t, r];
}

function runToResponse(): { record: WorkflowRecord; envelopes: Envelope[]; last: Transition } {
  const envelopes = chain();
  let record: WorkflowRecord | null = null;
  let last!: Transition;
  for (const e of envelopes) {
    last = apply(record, e);
    record = last.record;
  }
  return { record: record!, envelopes, last };
}

describe('applyEnvelope', () => {
  it('applyEnvelope - a query creates a pending workflow; the next step makes it running', () => {
    const q = query();
    const created = apply(null, q);
    expect(created.record.status).toBe('pending');
    expect(created.record.query).toBe('hello');
    const running = apply(created.record, child(q, 'classification_result', 'intent', {}));
    expect(running.record.status).toBe('running');
    expect(running.record.agents_involved).toEqual(['ingress', 'intent']);
  });

  it('applyEnvelope - the workflow keeps the session its query named (null without one); toView shows it, also for a record stored before it was kept', () => {
    expect(apply(null, query()).record.session_id).toBeNull();
    const q = query();
    const withSession = { ...q, payload: { ...(q.payload as object), session_id: 'ctx-1' } } as Envelope;
    const { record } = apply(null, withSession);
    expect(record.session_id).toBe('ctx-1');
    expect(toView(record).session_id).toBe('ctx-1');
    const { session_id: _dropped, ...older } = record;
    expect(toView(older as WorkflowRecord).session_id).toBeNull();
  });

  it('applyEnvelope - a response completes the workflow once, with one status change to announce', () => {
    const { record, last } = runToResponse();
    expect(record.status).toBe('completed');
    expect(record.finished_at).not.toBeNull();
    expect(last.emits).toEqual([expect.objectContaining({ status: 'completed', previous: 'running' })]);
    expect(record.steps.map((s) => s.message_type)).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results', 'response']);
  });

  it('applyEnvelope - times each step from its cause and keys steps by idempotency key, not agent', () => {
    const { record } = runToResponse();
    expect(record.steps[1].duration_ms).toBe(20);
    expect(new Set(record.steps.map((s) => s.step)).size).toBe(5);
  });

  it('applyEnvelope - a redelivery (same key, same stream sequence) changes nothing and counts nothing', () => {
    const q = query();
    const first = apply(null, q, undefined, 7);
    const again = apply(first.record, q, undefined, 7);
    expect(again.effect).toBe('redelivered');
    expect(again.record).toBe(first.record);
  });

  it('applyEnvelope - a re-publish (same key, new stream sequence) is dropped and counted', () => {
    const q = query();
    const first = apply(null, q);
    const dup = apply(first.record, q);
    expect(dup.effect).toBe('duplicate');
    expect(dup.record.duplicates_dropped).toBe(1);
    expect(dup.record.steps).toHaveLength(1);
  });

  it('applyEnvelope - a second query under another key (one keyed submission from two clients at once) is a duplicate, also after the end; its redelivery is not counted again', () => {
    const q = query();
    const first = apply(null, q);
    const fromCli = { ...q, message_id: newMessageId(), agent: 'cli' };
    const dup = apply(first.record, fromCli, undefined, 42);
    expect(dup.effect).toBe('duplicate');
    expect(dup.record.duplicates_dropped).toBe(1);
    expect(dup.record.steps.map((s) => s.agent)).toEqual(['ingress']);
    expect(dup.record.agents_involved).toEqual(['ingress']);
    expect(queryStreamSeq(dup.record)).toBe(queryStreamSeq(first.record));
    expect(apply(dup.record, fromCli, undefined, 42).effect).toBe('redelivered');

    const { record: done } = runToResponse();
    const late = apply(done, { ...chain()[0], message_id: newMessageId(), agent: 'cli' });
    expect([late.effect, late.record.status, late.record.duplicates_dropped, late.record.late_envelopes]).toEqual(['duplicate', 'completed', 1, 0]);
  });

  it('applyEnvelope - a terminal status never changes; later envelopes count as late', () => {
    const { record, envelopes } = runToResponse();
    const cancel = child(envelopes[0], 'orchestration_command', 'ingress', { command: 'cancel' });
    const late = apply(record, cancel, 'cancel');
    expect(late.effect).toBe('late');
    expect(late.record.status).toBe('completed');
    expect(late.record.late_envelopes).toBe(1);
    expect(late.emits).toEqual([]);
  });

  it('applyEnvelope - envelopes stored before the response but applied after it (handed back by a hub that stalled) are steps in stream order, not late: the record keeps its query, start and degradations, and its status (found by the failure-under-load exploration)', () => {
    const [q, c, p, t0env, r] = chain();
    const t = { ...t0env, payload: tools([{ profile: 'trigram', reason: 'timeout', detail: 'slow' }]) } as unknown as Envelope;
    const at = (e: Envelope, s: number) => ({ e, s });
    const stored = [at(q, 101), at(c, 102), at(p, 103), at(t, 104), at(r, 105)];
    // The active hub applied the last two first; the stalled one handed the first three back.
    let record: WorkflowRecord | null = null;
    const effects: string[] = [];
    for (const { e, s } of [stored[3], stored[4], stored[0], stored[1], stored[2]]) {
      const next = apply(record, e, undefined, s);
      effects.push(next.effect);
      expect(next.emits.length).toBe(e === r ? 1 : 0);
      record = next.record;
    }
    expect(effects).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
    expect(record!.steps.map((st) => st.message_type)).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results', 'response']);
    expect(record).toEqual(expect.objectContaining({ status: 'completed', query: 'hello', started_at: q.timestamp, late_envelopes: 0, next_steps: [], degraded: true }));
    // Stored after the response, it is late as before.
    const cancel = apply(record, child(q, 'orchestration_command', 'ingress', { command: 'cancel' }), 'cancel', 106);
    expect({ effect: cancel.effect, late: cancel.record.late_envelopes, steps: cancel.record.steps.length }).toEqual({ effect: 'late', late: 1, steps: 5 });
  });

  it('applyEnvelope - on a running workflow too, a step applied after later ones goes where the stream holds it, and leaves what the workflow waits for', () => {
    const [q, c, p] = chain();
    let record = apply(null, q, undefined, 401).record;
    record = apply(record, p, undefined, 403).record;
    record = apply(record, c, undefined, 402).record;
    expect({ steps: record.steps.map((st) => st.message_type), next: record.next_steps, status: record.status }).toEqual({ steps: ['query', 'classification_result', 'execution_plan'], next: p.next_steps, status: 'running' });
  });

  it("applyEnvelope - results applied after newer ones of the same workflow (out of order) do not replace the newer ones' degradations (found by review)", () => {
    const [q, , p] = chain();
    const older = child(p, 'tool_results', 'search', tools([{ profile: 'trigram', reason: 'timeout', detail: 'slow' }]));
    const newer = child(p, 'tool_results', 'search', tools(), { attempt: 2 });
    let record = apply(null, q, undefined, 501).record;
    record = apply(record, newer, 'attempt-2', 503).record;
    record = apply(record, older, undefined, 502).record;
    expect({ degraded: record.degraded, degradations: record.degradations, steps: record.steps.map((st) => st.attempt) }).toEqual({ degraded: false, degradations: [], steps: [1, 1, 2] });
  });

  it('applyEnvelope - a step stored before a failure report but applied after it goes before it; a timed-out workflow, which no envelope ended, still counts what comes after as late', () => {
    const [q, c, p] = chain();
    const report = child(c, 'status_update', 'planner', { workflow_status: 'failed', step: 'classification_result', reason: 'boom' }, { status: 'error', error_details: { error_type: 'BOOM', error_message: 'it broke', retry_possible: false } });
    let record = apply(null, q, undefined, 201).record;
    record = apply(record, report, 'failed-classification_result', 203).record;
    const backfilled = apply(record, c, undefined, 202);
    expect({ effect: backfilled.effect, status: backfilled.record.status, steps: backfilled.record.steps.map((st) => st.agent) }).toEqual({ effect: 'applied', status: 'failed', steps: ['ingress', 'intent', 'planner'] });
    const timedOut = applyDeadline(apply(null, q, undefined, 301).record, new Date(t0.getTime() + 60_000)).record;
    expect(apply(timedOut, p, undefined, 300).effect).toBe('late');
  });

  it('applyEnvelope - an agent error fails the workflow, naming the agent, the step and the cause', () => {
    const q = query();
    const created = apply(null, q);
    const report = child(
      q,
      'status_update',
      'intent',
      { workflow_status: 'failed', step: 'query', reason: 'boom' },
      { status: 'error', error_details: { error_type: 'BOOM', error_message: 'it broke', retry_possible: false } },
    );
    const failed = apply(created.record, report, 'failed-query');
    expect(failed.record.status).toBe('failed');
    expect(failed.record.errors).toEqual([expect.objectContaining({ agent: 'intent', step: 'query', error_type: 'BOOM', error_message: 'it broke', message_id: report.message_id })]);
    expect(failed.emits[0]).toEqual(expect.objectContaining({ status: 'failed', step: 'query' }));
  });

  it('applyEnvelope - a cancel command cancels a running workflow', () => {
    const q = query();
    const created = apply(null, q);
    const cancelled = apply(created.record, child(q, 'orchestration_command', 'ingress', { command: 'cancel', reason: 'user asked' }), 'cancel');
    expect(cancelled.record.status).toBe('cancelled');
    expect(cancelled.emits[0].reason).toBe('user asked');
  });

  it('applyEnvelope - degraded tool results mark the workflow degraded', () => {
    const q = query();
    let r = apply(null, q).record;
    r = apply(r, child(q, 'tool_results', 'search', tools([{ profile: 'trigram', reason: 'timeout', detail: 'slow' }]))).record;
    expect(r.degraded).toBe(true);
    expect(r.degradations).toEqual([{ profile: 'trigram', reason: 'timeout', detail: 'slow' }]);
  });

  it("applyEnvelope - the hub's own status updates are recorded, never applied", () => {
    const { record, envelopes } = runToResponse();
    const update = child(envelopes[4], 'status_update', 'hub', { workflow_status: 'completed' });
    const t = apply(record, update, 'completed');
    expect(t.effect).toBe('recorded');
    expect(t.record.late_envelopes).toBe(0);
  });

  it("recordAnnouncement - the hub's announcement, recorded when published, arrives as a redelivery: nothing to write", () => {
    const { record, envelopes } = runToResponse();
    const update = child(envelopes[4], 'status_update', 'hub', { workflow_status: 'completed' });
    const delivery = { idempotencyKey: idempotencyKey(update.correlation_id, 'status_update', 'hub', 'completed'), streamSeq: 4242 };
    const recorded = recordAnnouncement(record, update, delivery);
    expect(recorded.seen[delivery.idempotencyKey]).toBe(4242);
    expect(record.seen[delivery.idempotencyKey]).toBeUndefined();
    const t = applyEnvelope(recorded, update, delivery, t0);
    expect(t.effect).toBe('redelivered');
    expect(t.record).toBe(recorded);
    // The same announcement stored again later (a re-publish past the stream's window) is counted.
    expect(applyEnvelope(recorded, update, { ...delivery, streamSeq: 9999 }, t0).effect).toBe('duplicate');
  });

  it('applyEnvelope - does not mutate the record it was given', () => {
    const q = query();
    const first = apply(null, q);
    const snapshot = JSON.stringify(first.record);
    apply(first.record, child(q, 'classification_result', 'intent', {}));
    expect(JSON.stringify(first.record)).toBe(snapshot);
  });
});

describe('applyDeadline', () => {
  it('applyDeadline - times out a workflow whose deadline passed, once', () => {
    const created = apply(null, query()).record;
    expect(applyDeadline(created, new Date(t0.getTime() + 5_000)).emits).toEqual([]);
    const timedOut = applyDeadline(created, new Date(t0.getTime() + 10_000));
    expect(timedOut.record.status).toBe('timed_out');
    expect(timedOut.emits).toHaveLength(1);
    expect(applyDeadline(timedOut.record, new Date(t0.getTime() + 20_000)).emits).toEqual([]);
  });

  it('applyDeadline - records why (the step still to come) and ends the workflow at its deadline, though the hub applies it later', () => {
    const q = query();
    const classified = apply(apply(null, q).record, child(q, 'classification_result', 'intent', {}, { next_steps: ['planner', 'search'] })).record;
    const late = applyDeadline(classified, new Date(t0.getTime() + 60_000)).record;
    expect(late.finished_at).toBe(q.deadline);
    expect(late.errors).toEqual([
      { error_type: 'DEADLINE_EXCEEDED', error_message: `deadline ${q.deadline} passed (waiting for planner)`, retry_possible: false, agent: 'planner', step: null, at: q.deadline },
    ]);
  });

  it('applyEnvelope - a workflow ends when its response was published, not when a hub that was down applies it', () => {
    const [q, c, p, t, r] = chain();
    let record: WorkflowRecord | null = null;
    for (const e of [q, c, p, t]) record = apply(record, e).record;
    const later = new Date(t0.getTime() + 30_000);
    const done = applyEnvelope(record, r, { idempotencyKey: idempotencyKey(r.correlation_id, r.message_type, r.agent), streamSeq: ++seq }, later).record;
    expect({ status: done.status, finished_at: done.finished_at }).toEqual({ status: 'completed', finished_at: r.timestamp });
    // A sender's clock ahead of the hub's cannot put the end after the moment the hub applies it.
    const ahead = { ...r, timestamp: new Date(later.getTime() + 3_600_000).toISOString() };
    const clamped = applyEnvelope(record, ahead, { idempotencyKey: idempotencyKey(r.correlation_id, r.message_type, r.agent), streamSeq: ++seq }, later).record;
    expect(clamped.finished_at).toBe(later.toISOString());
  });

  it('applyDeadline - leaves a finished workflow alone', () => {
    const { record } = runToResponse();
    expect(applyDeadline(record, new Date(t0.getTime() + 60_000)).record.status).toBe('completed');
  });
});

describe('applyDroppedDuplicate', () => {
  it('applyDroppedDuplicate - counts on a finished workflow without changing its status', () => {
    const { record } = runToResponse();
    const next = applyDroppedDuplicate(record, t0);
    expect(next.duplicates_dropped).toBe(1);
    expect(next.status).toBe('completed');
  });
});

describe('applyEnvelope - idempotency keys that are Object.prototype names', () => {
  const KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'];
  /** What the ledger does between two transitions: the record is stored as JSON and read back. */
  const roundTrip = (record: WorkflowRecord): WorkflowRecord => JSON.parse(JSON.stringify(record));

  it.each(KEYS)('applyEnvelope - a first envelope under Nats-Msg-Id %s is a step, not a duplicate', (key) => {
    const t = applyEnvelope(null, query(), { idempotencyKey: key, streamSeq: 1 }, t0);
    expect(t.effect).toBe('applied');
    expect(t.record.steps).toHaveLength(1);
    expect(t.record.duplicates_dropped).toBe(0);
  });

  it.each(KEYS)('applyEnvelope - the key %s is recorded as an own key that survives the ledger, so its re-publish is a duplicate and its redelivery is not', (key) => {
    const q = query();
    const first = roundTrip(applyEnvelope(null, q, { idempotencyKey: key, streamSeq: 1 }, t0).record);
    expect(Object.hasOwn(first.seen, key)).toBe(true);
    expect(Object.getPrototypeOf(first.seen)).toBe(Object.prototype);
    expect(applyEnvelope(first, q, { idempotencyKey: key, streamSeq: 1 }, t0).effect).toBe('redelivered');
    const again = applyEnvelope(first, { ...q, message_id: newMessageId() }, { idempotencyKey: key, streamSeq: 2 }, t0);
    expect(again.effect).toBe('duplicate');
    expect(again.record.duplicates_dropped).toBe(1);
  });

  it('applyEnvelope - a causation id that names an Object.prototype member times the step from its own timestamp', () => {
    const q = query();
    const created = apply(null, q).record;
    const c = child(q, 'classification_result', 'intent', {}, { causation_id: 'constructor' });
    const step = apply(created, c).record.steps[1];
    expect(step.started_at).toBe(c.timestamp);
    expect(step.duration_ms).toBe(0);
  });

  it('recordAnnouncement - records __proto__ as an own key', () => {
    const record = apply(null, query()).record;
    const announced = roundTrip(recordAnnouncement(record, { message_id: '__proto__', timestamp: t0.toISOString() }, { idempotencyKey: '__proto__', streamSeq: 9 }));
    expect(Object.hasOwn(announced.seen, '__proto__') && announced.seen.__proto__).toBe(9);
    expect(Object.hasOwn(announced.times, '__proto__')).toBe(true);
  });
});

describe('started_at', () => {
  it('applyEnvelope - a query timestamped after the hub saw it starts when the hub saw it, not in the future', () => {
    const ahead = { ...query(), correlation_id: 'wf-ahead', timestamp: new Date(t0.getTime() + 86_400_000).toISOString() };
    expect(apply(null, ahead).record.started_at).toBe(t0.toISOString());
    const onTime = { ...query(), correlation_id: 'wf-on-time', timestamp: new Date(t0.getTime() - 5).toISOString() };
    expect(apply(null, onTime).record.started_at).toBe(onTime.timestamp);
  });
});

describe('applyEnvelope - retry command', () => {
  const later = new Date(t0.getTime() + 60_000);
  const retryCommand = (parent: Envelope, deadline = new Date(later.getTime() + 5000)) => ({
    ...child(parent, 'orchestration_command', 'cli', { command: 'retry', reason: 'try again' }),
    message_id: newMessageId(),
    deadline: deadline.toISOString(),
  });
  const retry = (record: WorkflowRecord | null, command: Envelope, source: Envelope | null, streamSeq = ++seq) =>
    applyEnvelope(record, command, { idempotencyKey: `${command.correlation_id}.orchestration_command.cli.retry-${command.message_id}`, streamSeq }, later, { retrySource: source });
  const failedWorkflow = () => {
    const q = query();
    const failed = apply(apply(null, q).record, { ...child(q, 'classification_result', 'intent', {}), status: 'error', error_details: { error_type: 'BOOM', error_message: 'it broke', retry_possible: false } });
    return { q, record: failed.record };
  };

  it('applyEnvelope - a retry of a failed workflow starts its request again under the retry id, with the same budget from now, and links the two', () => {
    const { q, record } = failedWorkflow();
    const command = retryCommand(q);
    const t = retry(record, command, q);
    expect(t.record.status).toBe('failed');
    expect(t.emits).toEqual([]);
    expect(t.record.retried_as).toBe(correlationIdForRetry('acme', 'wf-1'));
    expect(t.retry).toEqual({
      correlation_id: correlationIdForRetry('acme', 'wf-1'),
      tenant_id: 'acme',
      payload: { ...q.payload, retry_of: 'wf-1' },
      // The query's 10 s, from when the hub applies the command, whatever deadline the command has.
      deadline: new Date(later.getTime() + 10_000).toISOString(),
      command,
    });
    expect(t.record.steps.at(-1)).toEqual(expect.objectContaining({ message_type: 'orchestration_command', agent: 'cli' }));
    expect(t.record.late_envelopes).toBe(0);
  });

  it('applyEnvelope - a retry stored before the failure that ended its workflow, applied after it (handed back by a stalled hub), is refused as asked of a running workflow, its step in stream order', () => {
    const q = query();
    const running = apply(apply(null, q, undefined, 5000).record, child(q, 'classification_result', 'intent', {}), undefined, 5001).record;
    const failure = { ...child(q, 'execution_plan', 'planner', {}), status: 'error' as const, error_details: { error_type: 'BOOM', error_message: 'it broke', retry_possible: false } };
    const failed = apply(running, failure, undefined, 5003).record;
    expect(failed.status).toBe('failed');
    const command = retryCommand(q);
    const t = retry(failed, command, q, 5002);
    expect(t.retry).toBeUndefined();
    expect(t.record.retried_as).toBeNull();
    expect(t.record.status).toBe('failed');
    expect(t.record.errors.at(-1)).toEqual(expect.objectContaining({ error_type: 'NOT_RETRYABLE', message_id: command.message_id, error_message: expect.stringMatching(/is running: only a workflow that has ended can be retried.*asked before it ended/) }));
    expect(t.record.steps.map((s) => s.message_type)).toEqual(['query', 'classification_result', 'orchestration_command', 'execution_plan']);
    // Stored after the end, the same command starts the retry.
    expect(retry(failed, retryCommand(q), q, 5004).retry).toBeDefined();
  });

  it('queryStreamSeq - where the stream holds the query the workflow ran; none for a workflow whose query the hub has not seen', () => {
    const q = query();
    const created = applyEnvelope(null, q, { idempotencyKey: idempotencyKey(q.correlation_id, 'query', 'ingress'), streamSeq: 4242 }, t0).record;
    expect(queryStreamSeq(created)).toBe(4242);
    expect(queryStreamSeq(apply(null, child(q, 'classification_result', 'intent', {})).record)).toBeNull();
  });

  it('applyEnvelope - a retry command for a workflow the hub has no query of records a pending workflow that refuses it, saying so', () => {
    const t = retry(null, retryCommand(query()), null);
    expect(t.record.status).toBe('pending');
    expect(t.retry).toBeUndefined();
    expect(t.record.errors).toEqual([expect.objectContaining({ error_type: 'NOT_RETRYABLE', error_message: expect.stringMatching(/no query recorded for workflow wf-1/) })]);
  });

  it('applyEnvelope - a retry command with status error reports a failure like any envelope: it fails a running workflow and is late on a finished one', () => {
    const q = query();
    const running = apply(apply(null, q).record, child(q, 'classification_result', 'intent', {})).record;
    const errorCommand = { ...retryCommand(q), status: 'error' as const, error_details: { error_type: 'X', error_message: 'x', retry_possible: false } };
    expect(retry(running, errorCommand, q).record.status).toBe('failed');
    const { record } = failedWorkflow();
    expect(retry(record, { ...errorCommand, message_id: newMessageId() }, q)).toEqual(expect.objectContaining({ effect: 'late' }));
  });

  it('applyEnvelope - retry commands past MAX_COMMAND_STEPS change nothing: the record stops growing, and a redelivery is ignored alike', () => {
    const { q, record } = failedWorkflow();
    let current = retry(record, retryCommand(q), q).record;
    for (let i = 1; i < MAX_COMMAND_STEPS; i++) current = retry(current, retryCommand(q), q).record;
    const size = JSON.stringify(current).length;
    for (let i = 0; i < 2 * MAX_COMMAND_STEPS; i++) current = retry(current, retryCommand(q), q).record;
    expect(JSON.stringify(current).length).toBe(size);
    expect(current.steps.filter((s) => s.message_type === 'orchestration_command')).toHaveLength(MAX_COMMAND_STEPS);
    const last = retryCommand(q);
    const once = retry(current, last, q, 987_654);
    expect({ effect: once.effect, same: once.record === current }).toEqual({ effect: 'recorded', same: true });
    expect(retry(once.record, last, q, 987_654).record).toBe(current);
  });

  it('applyEnvelope - a finished workflow flooded with late envelopes stops growing at MAX_FINISHED_KEYS and still counts them', () => {
    const { record, envelopes } = runToResponse();
    const late = (i: number) => ({ ...child(envelopes[4], 'status_update', `agent-${i}`, {}), message_id: newMessageId() });
    let current = record;
    for (let i = 0; i < MAX_FINISHED_KEYS; i++) current = apply(current, late(i)).record;
    expect(Object.keys(current.seen)).toHaveLength(MAX_FINISHED_KEYS);
    const full = current;
    for (let i = 0; i < 1000; i++) current = apply(current, late(MAX_FINISHED_KEYS + i)).record;
    expect(current.late_envelopes).toBe(full.late_envelopes + 1000);
    // Nothing else grows: the keys, the message times and the steps are the same objects.
    expect([current.seen, current.times, current.steps]).toEqual([full.seen, full.times, full.steps]);
    expect(current.seen === full.seen && current.times === full.times && current.steps === full.steps).toBe(true);
    expect(current.status).toBe('completed');
    // Another query: a duplicate, counted; the hub's own announcement: recorded as before, nothing to count.
    const again = apply(current, { ...envelopes[0], message_id: newMessageId() }, 'again');
    expect([again.effect, again.record.duplicates_dropped - current.duplicates_dropped]).toEqual(['duplicate', 1]);
    const own = apply(current, child(envelopes[4], 'status_update', 'hub', {}), 'completed');
    expect({ effect: own.effect, same: own.record === current }).toEqual({ effect: 'recorded', same: true });
  });

  it('applyEnvelope - a failed workflow flooded past MAX_FINISHED_KEYS can still be retried', () => {
    const { q, record } = failedWorkflow();
    let current = record;
    for (let i = 0; i < MAX_FINISHED_KEYS; i++) current = apply(current, { ...child(q, 'status_update', `agent-${i}`, {}), message_id: newMessageId() }).record;
    const retried = retry(current, retryCommand(q), q);
    expect(retried.retry).toBeDefined();
  });

  it('applyEnvelope - a workflow retried already starts nothing new when asked again', () => {
    const { q, record } = failedWorkflow();
    const first = retry(record, retryCommand(q), q);
    const again = retry(first.record, retryCommand(q), q);
    expect(again.retry).toBeUndefined();
    expect(again.record.retried_as).toBe(first.record.retried_as);
    expect(again.record.errors).toEqual(first.record.errors);
  });

  it.each([
    ['running', (r: WorkflowRecord) => r],
    ['completed with every lens', (r: WorkflowRecord) => ({ ...r, status: 'completed' as const })],
  ])('applyEnvelope - a retry of a workflow %s is refused (NOT_RETRYABLE), and nothing else changes', (_what, shape) => {
    const q = query();
    const running = shape(apply(apply(null, q).record, child(q, 'classification_result', 'intent', {})).record);
    const t = retry(running, retryCommand(q), q);
    expect(t.retry).toBeUndefined();
    expect(t.record.retried_as).toBeNull();
    expect(t.record.status).toBe(running.status);
    expect(t.record.next_steps).toEqual(running.next_steps);
    expect(t.record.errors).toEqual([expect.objectContaining({ error_type: 'NOT_RETRYABLE', agent: 'cli', step: 'orchestration_command', message_id: t.record.steps.at(-1)!.message_id })]);
  });

  it('applyEnvelope - a degraded completion and a cancelled workflow can be retried', () => {
    const q = query();
    const done = apply(apply(null, q).record, child(q, 'classification_result', 'intent', {})).record;
    expect(retry({ ...done, status: 'completed', degraded: true }, retryCommand(q), q).retry).toBeDefined();
    expect(retry({ ...done, status: 'cancelled' }, retryCommand(q), q).retry).toBeDefined();
    expect(retry({ ...done, status: 'timed_out' }, retryCommand(q), q).retry).toBeDefined();
  });

  it('applyEnvelope - a retry is refused (RETRY_IMPOSSIBLE) when the stream no longer holds the query, or holds another workflow\u2019s there', () => {
    const { q, record } = failedWorkflow();
    for (const source of [null, { ...q, correlation_id: 'wf-2' }]) {
      const t = retry(record, retryCommand(q), source);
      expect(t.retry).toBeUndefined();
      expect(t.record.retried_as).toBeNull();
      expect(t.record.errors.at(-1)).toEqual(expect.objectContaining({ error_type: 'RETRY_IMPOSSIBLE', agent: 'cli' }));
    }
  });

  it('retryNotStarted - a retry whose query could not be published is refused instead, the command still a step', () => {
    const { q, record } = failedWorkflow();
    const started = retry(record, retryCommand(q), q);
    const undone = retryNotStarted(started, 'too large');
    expect(undone.retry).toBeUndefined();
    expect(undone.record.retried_as).toBeNull();
    expect(undone.record.steps).toEqual(started.record.steps);
    expect(undone.record.errors.at(-1)).toEqual(expect.objectContaining({ error_type: 'RETRY_IMPOSSIBLE', error_message: 'the retry could not be started: too large' }));
    expect(retryWouldStart(undone.record)).toBe(true);
    expect(retryWouldStart(started.record)).toBe(false);
  });

  it('applyEnvelope - the same retry command delivered again is a redelivery, stored again a duplicate: one retry', () => {
    const { q, record } = failedWorkflow();
    const command = retryCommand(q);
    const first = retry(record, command, q, 500);
    const redelivered = retry(first.record, command, q, 500);
    const stored = retry(first.record, command, q, 501);
    expect([redelivered.effect, redelivered.retry, stored.effect, stored.retry]).toEqual(['redelivered', undefined, 'duplicate', undefined]);
  });

  it('applyEnvelope - the query of a retry records what it retries; a retry_of from anyone but the hub, or on another id, is not taken', () => {
    const retryId = correlationIdForRetry('acme', 'wf-1');
    const payload = { query: 'hello', top_k: 5, require_all: false, retry_of: 'wf-1' };
    const fromHub = { ...query(), correlation_id: retryId, agent: 'hub', payload } as Envelope;
    expect(toView(apply(null, fromHub).record)).toEqual(expect.objectContaining({ retry_of: 'wf-1', retried_as: null }));
    expect(toView(apply(null, { ...fromHub, agent: 'ingress' }).record).retry_of).toBeNull();
    expect(toView(apply(null, { ...fromHub, correlation_id: 'rt_forged' }).record).retry_of).toBeNull();
    expect(toView(apply(null, query()).record)).toEqual(expect.objectContaining({ retry_of: null, retried_as: null }));
  });
});
