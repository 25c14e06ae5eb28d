import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { deepText, describeCrash, labelled, watchCrashes } from './fuzz.arbitraries';

/** Method names of A2A 1.0 and its 0.3 compatibility layer, as @a2a-js/sdk 1.3.0 serves them. */
const METHODS_V1 = ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'ListTasks', 'SubscribeToTask', 'GetExtendedAgentCard', 'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig'];
const METHODS_V03 = ['message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/resubscribe', 'tasks/pushNotificationConfig/set', 'tasks/pushNotificationConfig/get', 'agent/getAuthenticatedExtendedCard'];
const SENDS = ['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream'];
const STREAMS = ['SendStreamingMessage', 'message/stream', 'SubscribeToTask', 'tasks/resubscribe'];
const TERMINAL_STATES = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED', 'completed', 'failed', 'canceled', 'rejected'];

interface RpcCall {
  /** The body as sent: usually JSON of one request or a batch, sometimes not JSON at all. */
  body: string;
  headers: Record<string, string>;
  method?: unknown;
  id?: unknown;
  batch: boolean;
}

function check(ok: unknown, message: () => string): void {
  if (!ok) throw new Error(message());
}

// ---------------------------------------------------------------- generators

const query = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('what does the correlation hub keep', 'how does chorus drop duplicates', 'profile:bm25 fusion', 'which profiles does the search worker fuse') },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '   ', 'x'.repeat(4001), '\u0000', 'profile:nope') },
);
const anyJson = fc.jsonValue({ maxDepth: 2 });
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** Parts of a message in both wire shapes (1.0: `{text}`; 0.3: `{kind:'text', text}`), and junk. */
const partV1 = fc.oneof(
  { weight: 5, arbitrary: query.map((text) => ({ text })) },
  { weight: 1, arbitrary: anyJson.map((data) => ({ data })) },
  { weight: 1, arbitrary: fc.record({ url: fc.webUrl(), mediaType: fc.constantFrom('text/plain', 'x/y') }) },
  { weight: 1, arbitrary: anyJson },
);
const partV03 = fc.oneof(
  { weight: 5, arbitrary: query.map((text) => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: anyJson.map((data) => ({ kind: 'data', data })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('file'), file: fc.record({ uri: fc.webUrl() }) }) },
  { weight: 1, arbitrary: anyJson },
);
const messageArb = (v1: boolean, knownTask: fc.Arbitrary<string>) =>
  fc.record(
    {
      ...(v1 ? {} : { kind: fc.constantFrom<unknown>('message', 'task', 1) }),
      messageId: fc.oneof(fc.constant(null).map(() => randomUUID()), fc.string({ maxLength: 20 }), anyJson),
      role: v1 ? fc.constantFrom<unknown>('ROLE_USER', 'ROLE_USER', 'ROLE_AGENT', 'ROLE_UNSPECIFIED', 'user', 7) : fc.constantFrom<unknown>('user', 'user', 'agent', 'ROLE_USER', 7),
      parts: fc.oneof({ weight: 6, arbitrary: fc.array(v1 ? partV1 : partV03, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: anyJson }),
      contextId: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('__proto__', 'constructor', 'x'.repeat(2000)), anyJson),
      taskId: fc.oneof(knownTask, fc.string({ maxLength: 40 }), anyJson),
      metadata: anyJson,
      extensions: anyJson,
      referenceTaskIds: fc.oneof(fc.array(knownTask, { maxLength: 2 }), anyJson),
    },
    { requiredKeys: ['messageId', 'role', 'parts'] },
  );
const configurationArb = fc.record(
  { blocking: fc.oneof(fc.boolean(), anyJson), historyLength: fc.oneof(fc.integer({ min: -5, max: 50 }), anyJson), acceptedOutputModes: fc.oneof(fc.constant(['text/plain']), anyJson) },
  { requiredKeys: [] },
);
function paramsArb(method: string, knownTask: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const v1 = !method.includes('/');
  const taskId = fc.oneof({ weight: 3, arbitrary: knownTask }, { weight: 2, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 1, arbitrary: fc.oneof(fc.integer(), anyJson) });
  const structured: fc.Arbitrary<unknown> = SENDS.includes(method)
    ? fc.record({ message: messageArb(v1, knownTask), configuration: configurationArb, metadata: anyJson }, { requiredKeys: ['message'] })
    : ['ListTasks'].includes(method)
      ? fc.record({ pageSize: fc.oneof(fc.integer({ min: -5, max: 1000 }), anyJson), pageToken: anyJson, contextId: anyJson, status: anyJson }, { requiredKeys: [] })
      : fc.record({ id: taskId, name: fc.oneof(knownTask.map((t) => `tasks/${t}`), fc.string({ maxLength: 20 })), historyLength: fc.oneof(fc.integer({ min: -5, max: 50 }), anyJson), metadata: anyJson }, { requiredKeys: [] });
  return fc.oneof({ weight: 6, arbitrary: structured }, { weight: 1, arbitrary: anyJson });
}
const methodArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...METHODS_V1, ...METHODS_V03) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'rpc.discover', 'message/SEND', 'sendmessage')) },
);
const idArb = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.constant(undefined), fc.double(), anyJson);
const jsonrpcArb = fc.oneof({ weight: 8, arbitrary: fc.constant<unknown>('2.0') }, { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, '1.0', 2, null, '2.0 ') });

const requestObject = (knownTask: fc.Arbitrary<string>) =>
  methodArb.chain((method) =>
    fc.record({ jsonrpc: jsonrpcArb, id: idArb, method: fc.constant<unknown>(method), params: opt(paramsArb(typeof method === 'string' ? method : '', knownTask)) }).map((r) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v;
      return out;
    }),
  );

const versionHeader = fc.oneof(fc.constant<Record<string, string>>({}), fc.constant({ 'A2A-Version': '1.0' }), fc.constantFrom('0.3', '2.0', 'x', '').map((v) => ({ 'A2A-Version': v })));
const contentTypeHeader = fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'application/a2a+json') });

function callArb(knownTask: fc.Arbitrary<string>): fc.Arbitrary<RpcCall> {
  const single = requestObject(knownTask).map((r) => ({ body: JSON.stringify(r), method: r.method, id: r.id, batch: false }));
  const batch = fc.array(requestObject(knownTask), { maxLength: 3 }).map((rs) => ({ body: JSON.stringify(rs), method: undefined, id: undefined, batch: true }));
  const junk = fc
    .oneof(
      fc.string({ maxLength: 100 }),
      fc.constantFrom('', '{', 'null', '"x"', '[]', '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}{}', '\ufeff{}'),
      fc.integer({ min: 2, max: 8000 }).map((n) => `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${deepText(n, 'object')}}`),
      fc.integer({ min: 70 * 1024, max: 120 * 1024 }).map((n) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { pad: 'p'.repeat(n) } })),
    )
    .map((body) => ({ body, method: undefined, id: undefined, batch: false }));
  return fc
    .tuple(fc.oneof({ weight: 8, arbitrary: single }, { weight: 1, arbitrary: batch }, { weight: 2, arbitrary: junk }), versionHeader, contentTypeHeader)
    .map(([c, v, ct]) => {
      const call: RpcCall = { ...c, headers: { 'content-type': ct, ...v } };
      return labelled(call, `${JSON.stringify(call.headers)} ${call.body.length > 300 ? `${call.body.slice(0, 300)}…(${call.body.length} chars)` : call.body}`);
    });
}

// ---------------------------------------------------------------- the suite

describe('fuzz - A2A JSON-RPC', () => {
  let f: ChorusFixture;
  let crashes: ReturnType<typeof watchCrashes>;
  /** Task ids seen so far (the first is a completed one). */
  const tasks: string[] = [];
  const knownTask = fc.nat().map((i) => tasks[i % tasks.length] ?? 'none');

  let sdkErrors: jest.SpyInstance;

  beforeAll(async () => {
    crashes = watchCrashes();
    // @a2a-js/sdk logs every refused request with console.error; junk requests are the point here.
    sdkErrors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    f = await startChorusFixture({ CHORUS_NATS_TIMEOUT_MS: '3000' });
    const first = await rpc({ body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'what does the correlation hub keep' }] } } }), headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, batch: false }, 15_000);
    expect(first.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    tasks.push(first.json.result.task.id);
  });
  afterAll(async () => {
    await f?.stop();
    crashes?.stop();
    sdkErrors?.mockRestore();
  });

  async function rpc(call: RpcCall, timeoutMs: number): Promise<{ status: number; contentType: string; text: string; json: any; events: any[] }> {
    let res: Response;
    try {
      res = await fetch(`${f.url}/a2a`, { method: 'POST', headers: call.headers, body: call.body, signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      throw new Error(`no answer within ${timeoutMs} ms (or the connection failed): ${String(e)}`);
    }
    const text = await res.text().catch((e) => {
      throw new Error(`the answer did not end within ${timeoutMs} ms: ${String(e)}`);
    });
    const contentType = res.headers.get('content-type') ?? '';
    let json: unknown;
    try {
      json = contentType.includes('json') ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const events = contentType.startsWith('text/event-stream')
      ? text
          .split('\n\n')
          .map((block) => block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
          .filter((data) => data.length > 0)
          .map((data) => {
            try {
              return JSON.parse(data);
            } catch {
              return { unparseable: data };
            }
          })
      : [];
    return { status: res.status, contentType, text, json, events };
  }

  /** A JSON-RPC 2.0 response: one of result or error, an error with an integer code and a message. */
  function isRpcResponse(r: any): boolean {
    if (typeof r !== 'object' || r === null || r.jsonrpc !== '2.0') return false;
    if (('result' in r) === ('error' in r)) return false;
    return !('error' in r) || (Number.isInteger(r.error?.code) && typeof r.error?.message === 'string' && r.error.message.length > 0);
  }

  /** The task ids and task states an answer carries (both wire shapes), to learn ids and count terminal updates. */
  function statesOf(result: any): { taskId?: string; state?: string; update: boolean } {
    const task = result?.task ?? (result?.kind === 'task' ? result : undefined);
    const update = result?.statusUpdate ?? (result?.kind === 'status-update' ? result : undefined);
    if (task) return { taskId: task.id, state: task.status?.state, update: false };
    if (update) return { taskId: update.taskId, state: update.status?.state, update: true };
    return { update: false };
  }

  async function checkCall(call: RpcCall): Promise<void> {
    const long = typeof call.method === 'string' && (SENDS.includes(call.method) || STREAMS.includes(call.method));
    const a = await rpc(call, long ? 20_000 : 5000);
    const what = `${JSON.stringify(call.headers)} ${call.body.slice(0, 200)} → ${a.status} ${a.contentType} ${a.text.slice(0, 300)}`;
    if (a.contentType.startsWith('text/event-stream')) {
      check(a.status === 200 && a.events.length > 0 && a.events.every(isRpcResponse), () => `a stream of non-JSON-RPC events: ${what}`);
      const states = a.events.map((e) => statesOf(e.result));
      for (const s of states) if (s.taskId && !tasks.includes(s.taskId)) tasks.push(s.taskId);
      const startedHere = SENDS.includes(call.method as string) && states[0]?.state !== undefined && !TERMINAL_STATES.includes(states[0].state as string);
      if (startedHere && a.events.every((e) => !e.error)) {
        const terminal = states.filter((s) => s.update && TERMINAL_STATES.includes(s.state as string));
        check(terminal.length === 1 && states[states.length - 1] === terminal[0], () => `a streamed task ended with ${terminal.length} terminal updates (last: ${states[states.length - 1]?.state}): ${what}`);
      }
      return;
    }
    check(a.json !== undefined, () => `an answer that is not JSON: ${what}`);
    check(a.status < 500 || isRpcResponse(a.json), () => `a ${a.status} without a JSON-RPC error body: ${what}`);
    check(isRpcResponse(a.json) || (Array.isArray(a.json) && a.json.every(isRpcResponse)), () => `not a JSON-RPC 2.0 response: ${what}`);
    const requestId = call.id;
    // The id is echoed once the body was read as JSON; the SDK refuses an unsupported Content-Type
    // (-32005) or A2A-Version (-32009) before it reads the body.
    const read = call.headers['content-type'] === 'application/json' && ![-32700, -32005, -32009].includes(a.json?.error?.code);
    if (read && !Array.isArray(a.json) && (typeof requestId === 'string' || (typeof requestId === 'number' && Number.isFinite(requestId)))) {
      check(a.json.id === requestId, () => `the response id ${JSON.stringify(a.json.id)} is not the request's ${JSON.stringify(requestId)}: ${what}`);
    }
    const s = statesOf(a.json.result);
    if (s.taskId && !tasks.includes(s.taskId)) tasks.push(s.taskId);
  }

  it('A2A - random JSON-RPC requests, batches and junk, with and without A2A-Version: a JSON-RPC answer every time, no hang, and the process stays up', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(callArb(knownTask), { minLength: 1, maxLength: 3 }), async (calls) => {
        const mark = crashes.errors.length;
        for (const call of calls) await checkCall(call);
        const health = await fetch(`${f.url}/health`, { signal: AbortSignal.timeout(3000) });
        check(health.status === 200, () => `/health answered ${health.status}`);
        const crashed = crashes.since(mark);
        check(crashed.length === 0, () => `the Chorus process had an unhandled rejection or uncaught exception: ${describeCrash(crashed[0])}`);
      }),
      { numRuns: 150, endOnFailure: true },
    );
  }, 150_000);

  it('A2A - a body over the JSON parser limit (120 KB) gets a JSON-RPC error, not the REST API\'s 413 naming a limit /a2a does not use', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x', pad: 'p'.repeat(120_000) } });
    const a = await rpc({ body, headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, batch: false }, 5000);
    expect({ status: a.status, rpc: isRpcResponse(a.json), text: a.text.slice(0, 200) }).toEqual({ status: expect.any(Number), rpc: true, text: expect.any(String) });
  });

  it('A2A - after the fuzzing, a real SendMessage still completes and tasks/get still answers', async () => {
    const sent = await rpc({ body: JSON.stringify({ jsonrpc: '2.0', id: 'last', method: 'message/send', params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'how does chorus drop duplicates' }] } } }), headers: { 'content-type': 'application/json' }, batch: false }, 15_000);
    expect(sent.json.result.status.state).toBe('completed');
    const got = await rpc({ body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: tasks[0] } }), headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, batch: false }, 5000);
    expect(got.json.result.id).toBe(tasks[0]);
    expect(crashes.errors.map(describeCrash)).toEqual([]);
  }, 30_000);
});
