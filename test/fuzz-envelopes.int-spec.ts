import fc from 'fast-check';
import { ALL_MESSAGE_TYPES, durableName, type DeadLetter } from '@chorus/bus';
import { MESSAGE_TYPES, createEnvelope, newMessageId, parseEnvelope, workflowSubject } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { startResponder } from '../apps/responder/src';
import { startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';
import {
  anySubjectArb,
  buildEnvelope,
  deepText,
  describeCrash,
  envelopeSpecArb,
  expectedDeadLetterSubject,
  isFieldErrorList,
  labelled,
  metricSum,
  mutationArb,
  namesAnyField,
  preview,
  rawBodyArb,
  serialize,
  subjectOf,
  UNREADABLE_ISO_DATES,
  watchCrashes,
  type Draft,
} from './fuzz.arbitraries';

const TERMINAL = ['completed', 'failed', 'timed_out', 'cancelled'];
/** Status updates and commands of a workflow the ledger does not hold are left out of it (docs/hub.md). */
const STRAY_TYPES = ['status_update', 'orchestration_command'];
/** The hub's durable consumer of the workflow stream. */
const HUB_CONSUMER = durableName('hub', ALL_MESSAGE_TYPES);
const DEAD_LETTER_DATA_BYTES = 256 * 1024;
/** Fails a property with a message that says which envelope and what went wrong. */
function check(ok: unknown, message: () => string): void {
  if (!ok) throw new Error(message());
}

/** An envelope the suite published, and what Chorus must do with it. */
interface Published {
  label: string;
  subject: string;
  body: Uint8Array;
  /** Stream sequence, unless the publish was refused. */
  seq?: number;
  /** The stream dropped it as a re-publish (same Nats-Msg-Id): nothing to check. */
  duplicate?: boolean;
  valid: boolean;
  /** For an invalid one: the errors must name one of these fields (null: any field). */
  fields: readonly string[] | null;
  env?: Record<string, unknown>;
  /** Published with this Nats-Msg-Id. */
  msgId?: string;
}

describe('fuzz - envelopes on every workflow subject', () => {
  let f: ChorusFixture;
  const letters: Array<{ subject: string; letter: DeadLetter }> = [];
  let dlq: { close(): Promise<void | Error> } | undefined;
  /** Deadlines published so far that Date.parse cannot read (they can break other workflows' timeouts). */
  const unreadableDeadlines: string[] = [];
  let run = 0;
  let crashes: ReturnType<typeof watchCrashes>;

  beforeAll(async () => {
    crashes = watchCrashes();
    f = await startChorusFixture({ CHORUS_MAX_DELIVER: '3', CHORUS_RETRY_MAX_MS: '500', CHORUS_NATS_TIMEOUT_MS: '3000' });
    // Read what the dead-letter stream stores (a core subscription would also see the re-publishes it drops).
    const consumer = await f.chorus.bus.js.consumers.get(f.config.bus.deadLetterStream);
    const messages = await consumer.consume();
    dlq = messages;
    void (async () => {
      for await (const m of messages) letters.push({ subject: m.subject, letter: m.json<DeadLetter>() });
    })();
  });
  afterAll(async () => {
    await dlq?.close();
    await f?.stop();
    crashes.stop();
  });

  async function http(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 8000): Promise<{ status: number; body: any; text: string }> {
    try {
      const res = await fetch(`${f.url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.status, body: parsed, text };
    } catch (e) {
      return { status: -1, body: null, text: `no answer within ${timeoutMs} ms: ${String(e)}` };
    }
  }

  async function publish(subject: string, body: Uint8Array, msgId?: string): Promise<{ seq?: number; duplicate?: boolean; refused?: Error }> {
    try {
      const ack = await f.chorus.bus.js.publish(subject, body, msgId ? { msgID: msgId } : undefined);
      return { seq: ack.seq, duplicate: ack.duplicate };
    } catch (e) {
      return { refused: e as Error };
    }
  }

  /** Validity as the contract's own parser sees it; a parser that throws counts as "must be rejected". */
  function parses(body: Uint8Array, subject: string): boolean {
    try {
      return parseEnvelope(body, { subject }).ok;
    } catch {
      return false;
    }
  }

  async function counters(): Promise<{ invalid: number; deadLetters: number }> {
    const [metrics, stats] = await Promise.all([http('GET', '/metrics'), http('GET', '/v1/stats')]);
    check(metrics.status === 200 && stats.status === 200, () => `/metrics ${metrics.status}, /v1/stats ${stats.status}: ${stats.text.slice(0, 200)}`);
    return { invalid: metricSum(metrics.text, 'chorus_envelopes_total', { agent: 'hub', outcome: 'invalid' }), deadLetters: stats.body.totals.dead_letters };
  }

  /** Liveness, readiness, a real query answered within its deadline, and no crash since `mark`. */
  async function expectServing(mark: number): Promise<void> {
    const [health, ready] = await Promise.all([http('GET', '/health', undefined, 3000), http('GET', '/ready', undefined, 3000)]);
    check(health.status === 200 && ready.status === 200, () => `/health ${health.status}, /ready ${ready.status}: ${ready.text.slice(0, 200)}`);
    const golden = await http('POST', '/v1/queries?wait=true', { query: 'what does the correlation hub keep', deadline_ms: 8000 }, 12_000);
    check(golden.status === 200 && golden.body?.status === 'completed', () => `golden query: ${golden.status} ${golden.text.slice(0, 300)}`);
    const crashed = crashes.since(mark);
    check(crashed.length === 0, () => `the Chorus process had ${crashed.length} unhandled rejection(s) or uncaught exception(s); a production process would have exited: ${describeCrash(crashed[0])}`);
  }

  const lettersFor = (seq: number) => letters.filter((l) => l.letter.stream_seq === seq);

  /** Dead-lettered once, where the subject says, with every field error, the original body and the reason. */
  async function expectDeadLettered(p: Published, timeoutMs = 6000): Promise<void> {
    const seq = p.seq as number;
    const what = `the dead letter of "${p.label}" on ${p.subject.slice(0, 120)} (stream seq ${seq})`;
    const [{ subject, letter }] = await waitFor(() => lettersFor(seq).length > 0 && lettersFor(seq), { timeoutMs, what });
    check(subject === expectedDeadLetterSubject(p.subject), () => `${what} is on ${subject}, expected ${expectedDeadLetterSubject(p.subject)}`);
    check(letter.reason === 'invalid_envelope' && letter.subject === p.subject, () => `${what}: reason ${letter.reason}, subject ${letter.subject}`);
    check(letter.errors.length > 0 && isFieldErrorList(letter.errors), () => `${what} has no well-formed field errors: ${JSON.stringify(letter.errors).slice(0, 300)}`);
    check(!p.fields || namesAnyField(letter.errors, p.fields), () => `${what} names ${letter.errors.map((e) => e.field).join(', ')}, none of ${p.fields?.join(', ')}`);
    const kept = letter.data_encoding === 'base64' ? Buffer.from(letter.data, 'base64') : Buffer.from(letter.data, 'utf8');
    const original = Buffer.from(p.body.subarray(0, DEAD_LETTER_DATA_BYTES));
    check(kept.equals(original), () => `${what} does not hold the original body (${kept.length} vs ${original.length} bytes)`);
  }

  /**
   * A valid status update or command of a workflow the ledger does not hold (each case here has a
   * fresh id) is left out of it: once the hub's consumer is past it, there is no such workflow.
   */
  async function expectNotRecorded(p: Published): Promise<void> {
    const env = p.env as Record<string, any>;
    const what = `stray ${env.message_type} of ${env.tenant_id}/${env.correlation_id} ("${p.label}")`;
    // Handled once the hub's acknowledgement floor is past it, or the hub has nothing pending at all
    // (an earlier envelope in its retry backoff can hold the floor back a while).
    await waitFor(
      async () => {
        const hub = await f.chorus.bus.jsm.consumers.info(f.config.bus.workflowStream, HUB_CONSUMER);
        return hub.ack_floor.stream_seq >= (p.seq as number) || (hub.num_pending === 0 && hub.num_ack_pending === 0);
      },
      { timeoutMs: 15_000, what: `the hub past the ${what}` },
    );
    const r = await http('GET', `/v1/workflows/${env.correlation_id}?tenant_id=${env.tenant_id}`);
    check(r.status === 404, () => `${what} made a workflow: ${r.status} ${r.text.slice(0, 200)}`);
  }

  /** A valid envelope's workflow is recorded, ends in exactly one terminal state, and Chorus's own envelopes stay valid. */
  async function expectWorkflowEnds(p: Published): Promise<void> {
    const env = p.env as Record<string, any>;
    if (STRAY_TYPES.includes(env.message_type)) return expectNotRecorded(p);
    const tenant = env.tenant_id as string;
    const cid = env.correlation_id as string;
    const deadline = Date.parse(env.deadline);
    const what = `workflow ${tenant}/${cid} of "${p.label}"`;
    const wait = (Number.isFinite(deadline) && deadline - Date.now() < 60_000 ? Math.max(0, deadline - Date.now()) : 0) + 5000;
    let last = '';
    const view = await waitFor(
      async () => {
        const r = await http('GET', `/v1/workflows/${cid}?tenant_id=${tenant}`);
        last = `${r.status} ${r.body?.status ?? r.text.slice(0, 120)}`;
        return r.status === 200 && TERMINAL.includes(r.body.status) && r.body;
      },
      { timeoutMs: wait, what },
    ).catch((e) => {
      const poisoned = unreadableDeadlines.length > 0 ? `; deadlines published earlier that Date.parse cannot read: ${unreadableDeadlines.join(', ')}` : '';
      throw new Error(`${what} did not end (last: ${last})${poisoned}: ${String(e)}`);
    });
    const history = await http('GET', `/v1/workflows/${cid}/history?tenant_id=${tenant}`);
    const crashed = crashes.errors.length > 0 ? `; the process also had an unhandled rejection: ${describeCrash(crashes.errors[crashes.errors.length - 1])}` : '';
    check(history.status === 200, () => `history of ${what}: ${history.status} ${history.text.slice(0, 200)}${crashed}`);
    // The hub's announcements (not the published envelope, which may itself claim to be the hub's).
    const terminals = (history.body.envelopes as any[]).filter(
      (e) => e.agent === 'hub' && e.message_type === 'status_update' && TERMINAL.includes(e.payload.workflow_status) && e.message_id !== env.message_id,
    );
    check(terminals.length === 1 && terminals[0].payload.workflow_status === view.status, () => `${what} ended ${view.status} with terminal updates ${JSON.stringify(terminals.map((t) => t.payload.workflow_status))}`);
    if (!(env.agent === 'hub' && env.message_type === 'status_update')) {
      check(view.steps.some((s: any) => s.message_id === env.message_id), () => `${what} has no step for the published envelope ${env.message_id}`);
    }
    check(view.duplicates_dropped === 0, () => `${what} counts ${view.duplicates_dropped} duplicates, though each envelope was published once`);
    const own = letters.filter((l) => l.letter.correlation_id === cid && l.letter.reason === 'invalid_envelope');
    check(own.length === 0, () => `${what}: Chorus dead-lettered its own envelopes as invalid: ${own.map((l) => `${l.letter.subject} ${JSON.stringify(l.letter.errors)}`).join('; ').slice(0, 400)}`);
  }

  /** Publishes a batch, checks every outcome, the counters, and that Chorus still serves. */
  async function runBatch(batch: Published[], cancelFarDeadlines: Array<Record<string, any>> = []): Promise<void> {
    const mark = crashes.errors.length;
    const before = await counters();
    for (const p of batch) {
      const r = await publish(p.subject, p.body, p.msgId);
      if (r.refused) throw new Error(`publishing "${p.label}" (${p.body.length} bytes) was refused: ${r.refused.message}`);
      p.seq = r.seq;
      p.duplicate = r.duplicate;
    }
    for (const env of cancelFarDeadlines) {
      // An agent name of its own, so its idempotency key cannot be the fuzzed envelope's.
      const cancel = createEnvelope({ messageType: 'orchestration_command', correlationId: env.correlation_id, tenantId: env.tenant_id, agent: 'fuzz-canceller', deadline: env.deadline, payload: { command: 'cancel', reason: 'fuzz: end a far-deadline workflow' } });
      await f.chorus.bus.js.publish(workflowSubject(env.tenant_id, 'orchestration_command', env.correlation_id), JSON.stringify(cancel));
    }
    const checked = batch.filter((p) => !p.duplicate);
    await allChecked(checked.map((p) => (p.valid ? expectWorkflowEnds(p) : expectDeadLettered(p))));
    const invalid = checked.filter((p) => !p.valid);
    for (const p of invalid) check(lettersFor(p.seq as number).length === 1, () => `"${p.label}" was dead-lettered ${lettersFor(p.seq as number).length} times`);
    // The agent's consumer may store the dead letter before the hub's consumer has counted its rejection.
    let after = before;
    await waitFor(
      async () => {
        after = await counters();
        return after.invalid - before.invalid >= invalid.length && after.deadLetters - before.deadLetters >= invalid.length;
      },
      { timeoutMs: 5000, what: 'the counters' },
    ).catch(() => {
      throw new Error(
        `${invalid.length} invalid envelopes, but chorus_envelopes_total{agent="hub",outcome="invalid"} grew by ${after.invalid - before.invalid} and /v1/stats totals.dead_letters by ${after.deadLetters - before.deadLetters}`,
      );
    });
    await expectServing(mark);
  }

  it('envelopes - arbitrary bytes and JSON on every workflow subject are dead-lettered once with field errors, counted, and Chorus keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ subject: anySubjectArb, body: rawBodyArb }).map((m) => labelled(m, `${subjectOf(m.subject)} ${preview(m.body)}`)), { minLength: 1, maxLength: 6 }), async (messages) => {
        const batch: Published[] = messages
          .map(({ subject, body }) => ({ subject: subjectOf(subject), body: Buffer.from(body) }))
          .filter(({ subject, body }) => !parses(body, subject))
          .map(({ subject, body }) => ({ label: `${body.length} arbitrary bytes`, subject, body, valid: false, fields: isJsonObject(body) ? null : ['$'] }));
        await runBatch(batch);
      }),
      { numRuns: 20, endOnFailure: true },
    );
  }, 120_000);

  it('envelopes - mutated valid envelopes of every type: invalid ones are dead-lettered naming the broken field, valid ones end in exactly one terminal state', async () => {
    const caseArb = fc
      .record({ spec: envelopeSpecArb, suffix: fc.stringMatching(/^[A-Za-z0-9_-]{0,60}$/) })
      .chain(({ spec, suffix }) =>
        fc
          .array(mutationArb(spec.type), { maxLength: 2 })
          .map((mutations) => labelled({ spec, suffix, mutations }, `${spec.type} (${spec.status}, agent ${spec.agent}, tenant ${spec.tenant})${mutations.map((m) => `; ${m.label}`).join('')}`)),
      );
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: 1, maxLength: 3 }), async (cases) => {
        run += 1;
        const batch: Published[] = [];
        const far: Array<Record<string, any>> = [];
        cases.forEach(({ spec, suffix, mutations }, i) => {
          const cid = `fz${run}x${i}${suffix ? `-${suffix}` : ''}`;
          const env = buildEnvelope(spec, cid);
          const d: Draft = { env, subject: { tenant: spec.tenant, type: spec.type, cid, shape: 5 }, raw: [] };
          for (const mutation of mutations) mutation.apply(d);
          const subject = subjectOf(d.subject);
          const body = serialize(d);
          const label = `${spec.type}${mutations.map((m) => `; ${m.label}`).join('')}`;
          const mustFail = mutations.filter((m) => m.invalid).flatMap((m) => m.invalid as string[]);
          const valid = parses(body, subject);
          check(!(valid && mustFail.length > 0), () => `the contract's parser accepted an envelope that breaks it: ${label}`);
          if (valid && UNREADABLE_ISO_DATES.includes(String(d.env.deadline))) unreadableDeadlines.push(`${cid}: ${String(d.env.deadline)}`);
          if (valid && d.needsCancel) far.push(d.env);
          batch.push({ label, subject, body, valid, fields: mustFail.length > 0 ? mustFail : null, env: d.env, msgId: d.msgId });
        });
        await runBatch(batch, far);
      }),
      { numRuns: 20, endOnFailure: true },
    );
  }, 180_000);

  it('envelopes - a body over max_payload is refused at publish with a clear error; one just under it is dead-lettered with its body truncated', async () => {
    const maxPayload = f.chorus.bus.nc.info?.max_payload ?? 1024 * 1024;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 64 * 1024 }), fc.integer({ min: 64, max: 64 * 1024 }), async (over, under) => {
        run += 1;
        const cid = `fzbig${run}`;
        const env = createEnvelope({ messageType: 'query', correlationId: cid, tenantId: 'fuzz', agent: 'fuzzer', deadline: new Date(Date.now() + 2000), payload: { query: '', top_k: 5, require_all: false } });
        const sized = (bytes: number) => {
          const base = Buffer.byteLength(JSON.stringify(env));
          return Buffer.from(JSON.stringify({ ...env, payload: { ...env.payload, query: 'q'.repeat(bytes - base) } }));
        };
        const subject = workflowSubject('fuzz', 'query', cid);
        const tooBig = await publish(subject, sized(maxPayload + over));
        check(tooBig.refused && /max_payload/i.test(tooBig.refused.message), () => `a ${maxPayload + over}-byte publish was not refused for its size: ${JSON.stringify(tooBig)}`);
        const body = sized(maxPayload - under);
        await runBatch([{ label: `query of ${body.length} bytes`, subject, body, valid: false, fields: ['payload.query'] }]);
      }),
      { numRuns: 2, endOnFailure: true },
    );
  }, 60_000);

  describe('fuzz - envelopes: minimal reproducers of what fuzzing found', () => {
    const validQuery = (cid: string, extra: Record<string, unknown> = {}, deadlineMs = 3000) =>
      createEnvelope({ messageType: 'query', correlationId: cid, tenantId: 'fuzz', agent: 'fuzzer', deadline: new Date(Date.now() + deadlineMs), payload: { query: 'what does the correlation hub keep', top_k: 5, require_all: false, ...extra } as never });
    const one = (p: Published) => runBatch([p]);
    /** A query with a deadline as given (a string the schema may refuse, or Date.parse not read). */
    const fuzzQuery = (cid: string, deadline: string) =>
      createEnvelope({ messageType: 'query', correlationId: cid, tenantId: 'fuzz', agent: 'fuzzer', deadline, payload: { query: 'what does the correlation hub keep', top_k: 5, require_all: false } });
    // Tests that stop the responder (a workflow that runs until its deadline) get it back after.
    afterEach(async () => {
      if (!f.chorus.components.some((c) => c.name === 'responder')) f.chorus.components.push(await startResponder(f.chorus.bus, f.config, f.log));
    });

    it('envelopes - next_steps nested 4000 arrays deep is dead-lettered, not left to throw in the consumer', async () => {
      const env = JSON.stringify(validQuery('fzdeep1')).replace('"next_steps":[]', `"next_steps":${deepText(4000, 'array')}`);
      await one({ label: 'next_steps nested 4000 deep', subject: workflowSubject('fuzz', 'query', 'fzdeep1'), body: Buffer.from(env), valid: false, fields: ['next_steps'] });
    }, 30_000);

    it('envelopes - a 60 KB response with 3000 invalid provenance sources is dead-lettered (its error list must fit in a message)', async () => {
      const env = createEnvelope({
        messageType: 'response',
        correlationId: 'fzwide1',
        tenantId: 'fuzz',
        agent: 'fuzzer',
        deadline: new Date(Date.now() + 3000),
        payload: { query: 'q', answer: 'a', results: [], provenance: { sources: Array.from({ length: 3000 }, () => ({})), profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 100 }, method: 'extractive' } } as never,
      });
      await one({ label: '3000 empty provenance.sources', subject: workflowSubject('fuzz', 'response', 'fzwide1'), body: Buffer.from(JSON.stringify(env)), valid: false, fields: ['payload.provenance.sources'] });
    }, 30_000);

    it('envelopes - a query published with Nats-Msg-Id "constructor" is recorded as a step, not counted as a duplicate', async () => {
      const env = validQuery('fzctor1') as unknown as Record<string, unknown>;
      await one({ label: 'query with Nats-Msg-Id constructor', subject: workflowSubject('fuzz', 'query', 'fzctor1'), body: Buffer.from(JSON.stringify(env)), valid: true, fields: null, env, msgId: 'constructor' });
    }, 30_000);

    it('envelopes - the history of a workflow whose envelopes add up to more than max_payload is answered, not a 503 and an unhandled rejection', async () => {
      const env = validQuery('fzhist1', { junk: 'j'.repeat(300_000) }) as unknown as Record<string, unknown>;
      await one({ label: 'query carrying a 300 KB unknown field', subject: workflowSubject('fuzz', 'query', 'fzhist1'), body: Buffer.from(JSON.stringify(env)), valid: true, fields: null, env });
    }, 30_000);

    // Negative weights once passed the plan's validation and made the search agent publish a
    // tool_results with negative scores, which failed validation downstream: the plan is now refused.
    it('envelopes - a plan with negative fusion weights is dead-lettered naming payload.fusion.weights, so the search agent never fuses with them', async () => {
      const deadline = new Date(Date.now() + 2000);
      const request = { query: 'what does the correlation hub keep', top_k: 5, require_all: false };
      const env = createEnvelope({
        messageType: 'execution_plan',
        correlationId: 'fzweight1',
        tenantId: 'fuzz',
        agent: 'fuzzer',
        deadline,
        payload: {
          request,
          search_text: request.query,
          route: 'COMPLEX',
          profiles: [{ name: 'bm25', confidence: 1, reason: 'r' }, { name: 'trigram', confidence: 1, reason: 'r' }],
          alternatives: [],
          top_k: 5,
          fusion: { k: 60, rank_window: 100, weights: { bm25: -1, trigram: -1 } },
          search_deadline: deadline.toISOString(),
          explanation: 'fuzz',
        } as never,
      }) as unknown as Record<string, unknown>;
      await one({ label: 'plan with weights -1', subject: workflowSubject('fuzz', 'execution_plan', 'fzweight1'), body: Buffer.from(JSON.stringify(env)), valid: false, fields: ['payload.fusion.weights'] });
    }, 30_000);

    it('envelopes - a query whose payload has an own "constructor" key is dead-lettered, not left to throw in the consumer', async () => {
      const body = JSON.stringify(validQuery('fzctor2')).replace('"payload":{', '"payload":{"constructor":1,');
      await one({ label: 'payload.constructor = 1', subject: workflowSubject('fuzz', 'query', 'fzctor2'), body: Buffer.from(body), valid: false, fields: null });
    }, 30_000);

    it('envelopes - a forged status_update claiming to be the hub\'s does not end the workflow\'s event stream while the ledger has it running', async () => {
      // Long enough that the stream's one-second settling cannot reach the real timeout.
      const deadline = new Date(Date.now() + 4000).toISOString();
      // Without a responder, the workflow runs until its deadline.
      await stopApp(f, 'responder');
      await publish(workflowSubject('fuzz', 'query', 'fzforge1'), Buffer.from(JSON.stringify(fuzzQuery('fzforge1', deadline))));
      await waitFor(async () => (await http('GET', '/v1/workflows/fzforge1?tenant_id=fuzz')).status === 200, { what: 'the workflow recorded' });
      const forged = createEnvelope({ messageType: 'status_update', correlationId: 'fzforge1', tenantId: 'fuzz', agent: 'hub', deadline, payload: { workflow_status: 'completed' } });
      await publish(workflowSubject('fuzz', 'status_update', 'fzforge1'), Buffer.from(JSON.stringify(forged)));
      const stream = await http('GET', '/v1/workflows/fzforge1/events?tenant_id=fuzz', undefined, 10_000);
      const block = stream.text.split('\n\n').find((b) => b.includes('event: terminal')) ?? '';
      const terminal = JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))?.slice(6) ?? 'null');
      const ledger = await waitFor(async () => {
        const r = await http('GET', '/v1/workflows/fzforge1?tenant_id=fuzz');
        return TERMINAL.includes(r.body?.status) && r.body.status;
      }, { what: 'the workflow to end', timeoutMs: 8000 });
      expect({ streamed: terminal?.status, ledger }).toEqual({ streamed: ledger, ledger: 'timed_out' });
    }, 30_000);

    it('envelopes - a dead letter keeps the original body byte for byte, a leading BOM included', async () => {
      const body = Buffer.from('\ufeff{"message_type":"query"}');
      const r = await publish('chorus.wf.fuzz.query.fzbom1', body);
      const [{ letter }] = await waitFor(() => lettersFor(r.seq as number).length > 0 && lettersFor(r.seq as number), { what: 'the dead letter', timeoutMs: 5000 });
      const kept = letter.data_encoding === 'base64' ? Buffer.from(letter.data, 'base64') : Buffer.from(letter.data, 'utf8');
      expect(kept.toString('hex')).toBe(body.toString('hex'));
    });

    it('envelopes - invalid envelopes are counted under a bounded set of message_type labels, not one per bogus subject token', async () => {
      for (let i = 0; i < 3; i++) await publish(`chorus.wf.fuzz.bogus-${newMessageId()}.x`, Buffer.from('{}'));
      await waitFor(async () => (await http('GET', '/metrics')).text.includes('bogus-'), { timeoutMs: 3000, what: 'the invalid envelopes counted' }).catch(() => undefined);
      const metrics = await http('GET', '/metrics');
      const labels = new Set(
        metrics.text
          .split('\n')
          .filter((l) => l.startsWith('chorus_envelopes_total{') && l.includes('outcome="invalid"'))
          .map((l) => /message_type="([^"]*)"/.exec(l)?.[1]),
      );
      expect([...labels].filter((t) => !(MESSAGE_TYPES as readonly (string | undefined)[]).includes(t) && t !== '_invalid' && t !== 'unknown')).toEqual([]);
    });

    // Last: when it fails, the hub's deadline queue stays broken for the rest of the suite.
    it('envelopes - a deadline Date.parse cannot read ("20261130T103010Z") is rejected or still ends, and never stops other workflows from timing out', async () => {
      // Without a responder, both workflows run until their deadlines.
      await stopApp(f, 'responder');
      const bystander = fuzzQuery('fznan-bystander', new Date(Date.now() + 1500).toISOString());
      await publish(workflowSubject('fuzz', 'query', bystander.correlation_id), Buffer.from(JSON.stringify(bystander)));
      await waitFor(async () => (await http('GET', `/v1/workflows/${bystander.correlation_id}?tenant_id=fuzz`)).status === 200, { what: 'the bystander recorded' });
      const odd = fuzzQuery('fznan-1', '20261130T103010Z');
      const subject = workflowSubject('fuzz', 'query', odd.correlation_id);
      const valid = parses(Buffer.from(JSON.stringify(odd)), subject);
      const published: Published = { label: 'query with deadline 20261130T103010Z', subject, body: Buffer.from(JSON.stringify(odd)), valid, fields: null, env: odd as unknown as Record<string, unknown> };
      const r = await publish(subject, published.body);
      published.seq = r.seq;
      const bystanderEnds = expectWorkflowEnds({ label: 'bystander query', subject: '', body: Buffer.alloc(0), valid: true, fields: null, env: bystander as unknown as Record<string, unknown> });
      await allChecked([valid ? expectWorkflowEnds(published) : expectDeadLettered(published), bystanderEnds]);
    }, 30_000);
  });
});

/** Waits for every check (none is left running past the test) and reports all that failed. */
async function allChecked(checks: Array<Promise<void>>): Promise<void> {
  const failed = (await Promise.allSettled(checks)).filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed.length > 0) throw new Error(failed.map((o) => (o.reason instanceof Error ? o.reason.message : String(o.reason))).join('\n'));
}

function isJsonObject(body: Uint8Array): boolean {
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}
