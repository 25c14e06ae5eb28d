import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startNats, waitFor } from '@chorus/testing';
import { startResponder } from '../apps/responder/src';
import { getJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'chorus.js');

/** The real `chorus` command (the compiled CLI; `npm test` builds it first) against a running Chorus. */
async function chorus(f: ChorusFixture, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args, '--nats', f.nats.url], { env: { ...process.env, NATS_URL: '' }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

describe('chorus CLI, end to end', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  const queries = ['how does chorus drop duplicates', 'what is the correlation hub', 'reciprocal rank fusion k=60', 'dead letter subject for invalid envelopes', 'how do I run the tests'];

  it.each(queries)('chorus query --wait - "%s" prints the correlation id, then a completed workflow with fused results', async (query) => {
    const r = await chorus(f, 'query', query, '--wait');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^correlation_id: [0-9a-f-]{36}$/);
    expect(r.stdout).toMatch(/^status: completed in \d+ ms$/m);
    expect(r.stdout).toMatch(/^answer: .{10,}/m);
    expect(r.stdout).toMatch(/\[bm25 #\d+, trigram #\d+\]|\[trigram #\d+, bm25 #\d+\]/);
    expect(r.stdout).toMatch(/^profiles used: (bm25, trigram|trigram, bm25)$/m);
  });

  it('chorus status and history - show the workflow and its envelopes in causal order', async () => {
    const q = await chorus(f, 'query', 'what is an envelope', '--wait', '--json');
    expect(q.code).toBe(0);
    // stdout is one JSON document, the finished workflow; the id also went to stderr at once.
    const id = JSON.parse(q.stdout).correlation_id as string;
    expect(q.stderr).toBe(`correlation_id: ${id}\n`);

    const status = await chorus(f, 'status', id, '--json');
    expect(status.code).toBe(0);
    const view = JSON.parse(status.stdout);
    expect(view.correlation_id).toBe(id);
    expect(view.status).toBe('completed');

    const history = await chorus(f, 'history', id, '--json');
    expect(history.code).toBe(0);
    const envelopes = JSON.parse(history.stdout).envelopes as Array<{ message_type: string; correlation_id: string }>;
    expect(envelopes.map((e) => e.message_type)).toEqual(expect.arrayContaining(['query', 'classification_result', 'execution_plan', 'tool_results', 'response']));
    expect(new Set(envelopes.map((e) => e.correlation_id))).toEqual(new Set([id]));

    const text = await chorus(f, 'history', id);
    expect(text.stdout).toMatch(/response\s+responder/);
  });

  it('chorus watch - follows a workflow step by step until it ends, then shows it', async () => {
    const q = await chorus(f, 'query', 'how does the planner choose profiles', '--json');
    const id = JSON.parse(q.stdout.split('\n')[0]).correlation_id as string;
    const w = await chorus(f, 'watch', id);
    expect(w.code).toBe(0);
    const lines = w.stdout.split('\n');
    const order = ['query', 'classification_result', 'execution_plan', 'tool_results', 'response', 'status_update'].map((t) =>
      lines.findIndex((l) => new RegExp(`^  \\+\\d+ ms\\s+${t}\\s`).test(l)),
    );
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(w.stdout).toMatch(/execution_plan\s+planner\s+success\s+COMPLEX: bm25, trigram/);
    expect(w.stdout).toMatch(/^status: completed/m);
  });

  it('chorus list and cancel - recent workflows; a running one is cancelled, a finished one cannot be', async () => {
    await chorus(f, 'query', 'something to list', '--wait');
    const list = await chorus(f, 'list', '--json', '--status', 'completed');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).workflows.length).toBeGreaterThan(0);
    // Paging: the cursor the first page gives is accepted and leads past it.
    const first = JSON.parse((await chorus(f, 'list', '--json', '--limit', '1')).stdout);
    expect(first.next_cursor).toEqual(expect.any(String));
    const next = await chorus(f, 'list', '--json', '--limit', '1', '--cursor', first.next_cursor, '--agent', 'responder', '--since', '2020-01-01T00:00:00Z');
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout).workflows[0].correlation_id).not.toBe(first.workflows[0].correlation_id);
    // A value the hub refuses is a usage error, not "unreachable".
    const refused = await chorus(f, 'list', '--status', 'bogus');
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^chorus: status must be one of/) });

    await stopApp(f, 'responder'); // the workflow then waits for a response until its deadline
    const q = await chorus(f, 'query', 'this one gets cancelled', '--json', '--deadline-ms', '20000');
    const id = JSON.parse(q.stdout.split('\n')[0]).correlation_id as string;
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).body.steps?.length === 4, { what: 'the workflow waiting for its response' });
    const cancel = await chorus(f, 'cancel', id);
    expect({ code: cancel.code, stderr: cancel.stderr }).toEqual({ code: 0, stderr: '' });
    expect(cancel.stdout).toMatch(`cancel requested for ${id}`);
    const status = await chorus(f, 'watch', id, '--json');
    expect(JSON.parse(status.stdout.split('\n').filter(Boolean).pop()!).status).toBe('cancelled');
    const again = await chorus(f, 'cancel', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already finished \(cancelled\)/);
    f.chorus.components.push(await startResponder(f.chorus.bus, f.config, f.log));
    expect((await getJson(`${f.url}/v1/workflows/${id}`)).body.status).toBe('cancelled');
  });

  it('chorus retry - runs a failed workflow again as a new one that names it; a completed one has nothing to retry', async () => {
    const failed = await chorus(f, 'query', 'profile:nosuch what is an envelope', '--wait', '--json');
    expect(failed.code).toBe(1);
    const id = JSON.parse(failed.stdout).correlation_id as string;
    expect(JSON.parse(failed.stdout).errors[0].error_type).toBe('UNKNOWN_PROFILE');

    // The same request again, so the same failure; what matters here is that it ran, linked.
    const retry = await chorus(f, 'retry', id, '--wait');
    expect(retry.code).toBe(1);
    const retryId = /^correlation_id: (rt_[0-9a-f]{32})$/m.exec(retry.stdout)?.[1];
    expect(retryId).toEqual(expect.any(String));
    expect(retry.stdout).toMatch(new RegExp(`^retry of ${id}$`, 'm'));
    expect(retry.stdout).toMatch(/^status: failed in \d+ ms$/m);
    expect(retry.stdout).toMatch(new RegExp(`^retry of: ${id}$`, 'm'));
    expect(retry.stdout).toMatch(/\[UNKNOWN_PROFILE\] no profile nosuch/);
    expect(JSON.parse((await chorus(f, 'status', id, '--json')).stdout).retried_as).toBe(retryId);

    const again = await chorus(f, 'retry', id, '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(expect.objectContaining({ correlation_id: retryId, retry_of: id, duplicate: true }));

    const done = await chorus(f, 'query', 'what is an envelope', '--wait', '--json');
    const nothing = await chorus(f, 'retry', JSON.parse(done.stdout).correlation_id);
    expect({ code: nothing.code, stdout: nothing.stdout }).toEqual({ code: 1, stdout: '' });
    expect(nothing.stderr).toMatch(/completed with every lens it planned: there is nothing to retry/);
  });

  it('chorus bench - runs the benchmark script with its own options (here its help), needing no running Chorus', async () => {
    const help = await run(process.execPath, [BIN, 'bench', '--help'], { env: { ...process.env, NATS_URL: 'nats://127.0.0.1:1' } });
    expect(help.stdout).toMatch(/--only a,b/);
    expect(help.stdout).toMatch(/--concurrency 1,16,64/);
  });

  it('chorus - clear errors: usage (exit 2), unknown workflow (exit 1), unreachable NATS (exit 3), bad configuration (exit 2)', async () => {
    const usage = await chorus(f, 'query');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/query needs exactly one argument/);
    const deadline = await chorus(f, 'query', 'x', '--deadline-ms', '999999999');
    expect({ code: deadline.code, stderr: deadline.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/--deadline-ms must be from 100 to \d+/) });
    // A page larger than the hub serves is refused by the hub (as over HTTP), not cut to its size without a word.
    const page = await chorus(f, 'list', '--limit', '1000');
    // The key rule of HTTP's Idempotency-Key: a key the ingress would refuse is refused here too.
    const key = await chorus(f, 'query', 'x', '--idempotency-key', 'has spaces in it');
    expect({ code: key.code, stderr: key.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/--idempotency-key must be 1 to 256 printable ASCII characters, no spaces/) });
    // A key used before for another query: refused, naming what differs.
    const reuse = `cli-key-${Date.now()}`;
    expect((await chorus(f, 'query', 'what is a key', '--idempotency-key', reuse)).code).toBe(0);
    const reused = await chorus(f, 'query', 'what is another key', '--idempotency-key', reuse);
    expect({ code: reused.code, stderr: reused.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/already named workflow ik_\w+, started with another request \(query differs\)/) });
    expect({ code: page.code, stderr: page.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/limit must be an integer from 1 to 500/) });

    const missing = await chorus(f, 'status', 'no-such-workflow');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no workflow no-such-workflow/);

    const { code, stderr } = await run(process.execPath, [BIN, 'status', 'x', '--nats', 'nats://127.0.0.1:1'], { env: { ...process.env, NATS_URL: '' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(code).toBe(3);
    expect(stderr).toMatch(/cannot reach Chorus/);

    // A NATS server that answers but has no Chorus streams: exit 3 at once, not a process kept alive by its connection.
    const bare = await startNats({ own: true });
    try {
      const started = Date.now();
      const empty = await run(process.execPath, [BIN, 'list', '--nats', bare.url], { env: { ...process.env, NATS_URL: '' }, timeout: 20_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect({ code: empty.code, stderr: empty.stderr }).toEqual({ code: 3, stderr: expect.stringMatching(/cannot reach Chorus/) });
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await bare.stop();
    }

    // A bad setting is a usage error naming the variable, not a stack trace.
    const config = await run(process.execPath, [BIN, 'status', 'x', '--nats', f.nats.url], { env: { ...process.env, NATS_URL: '', CHORUS_NATS_TIMEOUT_MS: 'soon' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect({ code: config.code, stderr: config.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^chorus: invalid configuration:\n {2}- CHORUS_NATS_TIMEOUT_MS/) });
    expect(config.stderr).not.toMatch(/ at /);
  });
});
