import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startNats, waitFor } from '@chorus/testing';
import { startResponder } from '../apps/responder/src';
import { getJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

const run = promisify(execFile);
/** The compiled CLI (`npm test` builds it first); CHORUS_CLI_BIN tries another build's main.js without touching dist/. */
const BIN = process.env.CHORUS_CLI_BIN ?? join(__dirname, '..', 'bin', 'chorus.js');

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

/** `chorus …` whose reader has gone before it writes a line, as `| head -1` is once it has its line. */
async function chorusIntoClosedPipe(f: ChorusFixture, ...args: string[]): Promise<{ code: number | null; stderr: string }> {
  // The benchmark starts servers of its own and takes no --nats.
  const nats = args[0] === 'bench' ? [] : ['--nats', f.nats.url];
  const child = spawn(process.execPath, [BIN, ...args, ...nats], { env: { ...process.env, NATS_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr };
}

/** Exit code and output of a run expected to fail, or code 0. */
async function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [BIN, ...args], { env: { ...process.env, NATS_URL: '', ...env }, timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
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

  it('chorus query, status, list, watch - what clients sent cannot drive the terminal: escape sequences, control and bidirectional characters are shown escaped, line breaks as \\n; --json keeps the value', async () => {
    const hostile = 'duplicates \u001b[2J\u001b]0;pwned\u0007 \u202egnp.exe\u009b\nstatus: completed';
    const shown = 'duplicates \\u001b[2J\\u001b]0;pwned\\u0007 \\u202egnp.exe\\u009b\\nstatus: completed';
    const q = await chorus(f, 'query', hostile, '--wait');
    expect(q.code).toBe(0);
    const id = /^correlation_id: (\S+)$/m.exec(q.stdout)![1];
    expect(q.stdout).toContain(`query: ${shown}`);
    for (const args of [['status', id], ['list'], ['watch', id], ['history', id]]) {
      const r = await chorus(f, ...args);
      expect({ args, code: r.code, raw: /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/.test(r.stdout + r.stderr) }).toEqual({ args, code: 0, raw: false });
    }
    expect((await chorus(f, 'list')).stdout).toContain(`${id}  completed`);
    const json = await chorus(f, 'status', id, '--json');
    expect(JSON.parse(json.stdout).query).toBe(hostile);
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
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^chorus: --status must be one of/) });
    // --since and --until take what the HTTP API takes: a date, or a date-time with its offset; not a local time.
    expect((await chorus(f, 'list', '--json', '--since', '2020-01-01', '--until', '2999-12-31T23:59:59+01:00')).code).toBe(0);
    const local = await chorus(f, 'list', '--since', '2026-12-01 15:00');
    expect({ code: local.code, stderr: local.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^chorus: --since must be an RFC 3339 date-time \(2026-11-30T10:30:00Z\) or a date \(2026-11-30\)\n/) });

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
    // With --json, the error is also a JSON object on stdout, the exit code the same.
    const againJson = await chorus(f, 'cancel', id, '--json');
    expect({ code: againJson.code, stdout: JSON.parse(againJson.stdout), stderr: againJson.stderr }).toEqual({
      code: 1,
      stdout: { error: { error_type: 'ALREADY_FINISHED', message: `workflow ${id} already finished (cancelled); nothing to cancel`, status: 'cancelled' } },
      stderr: `chorus: workflow ${id} already finished (cancelled); nothing to cancel\n`,
    });
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
    // Without --wait, as query: the id alone on stdout (RETRY=$(chorus retry …)), the rest on stderr.
    const plain = await chorus(f, 'retry', id);
    expect(plain).toEqual({ code: 0, stdout: `${retryId}\n`, stderr: `retry of ${id} (retried before; this is that retry); follow it with: chorus status ${retryId}\n` });

    const done = await chorus(f, 'query', 'what is an envelope', '--wait', '--json');
    const nothing = await chorus(f, 'retry', JSON.parse(done.stdout).correlation_id);
    expect({ code: nothing.code, stdout: nothing.stdout }).toEqual({ code: 1, stdout: '' });
    expect(nothing.stderr).toMatch(/completed with every lens it planned: there is nothing to retry/);
    const nothingJson = await chorus(f, 'retry', JSON.parse(done.stdout).correlation_id, '--json');
    expect({ code: nothingJson.code, stdout: JSON.parse(nothingJson.stdout) }).toEqual({
      code: 1,
      stdout: { error: { error_type: 'NOT_RETRYABLE', message: expect.stringMatching(/there is nothing to retry/), status: 'completed' } },
    });
  });

  it('chorus status, history, watch, cancel, retry - another tenant\'s workflow: not found in the tenant read, named with a pointer to --tenant (exit 1; with --json, a JSON error too)', async () => {
    const q = await chorus(f, 'query', 'whose workflow is this', '--tenant', 'acme', '--wait', '--json');
    expect(q.code).toBe(0);
    const id = JSON.parse(q.stdout).correlation_id as string;
    for (const command of ['status', 'history', 'watch', 'cancel', 'retry']) {
      const r = await chorus(f, command, id);
      expect({ command, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ command, code: 1, stdout: '', stderr: `chorus: no workflow ${id} in tenant default (another tenant's? use --tenant T)\n` });
    }
    for (const command of ['status', 'history', 'watch', 'cancel', 'retry']) {
      const r = await chorus(f, command, id, '--json');
      const error = { error_type: 'WORKFLOW_NOT_FOUND', message: `no workflow ${id} in tenant default (another tenant's? use --tenant T)` };
      expect({ command, code: r.code, stdout: JSON.parse(r.stdout) }).toEqual({ command, code: 1, stdout: { error } });
    }
    const elsewhere = await chorus(f, 'status', id, '--tenant', 'globex');
    expect({ code: elsewhere.code, stderr: elsewhere.stderr }).toEqual({ code: 1, stderr: `chorus: no workflow ${id} in tenant globex (another tenant's? use --tenant T)\n` });
    // The hint to follow a workflow names its tenant, or it would not find it.
    const submitted = await chorus(f, 'query', 'whose workflow is this one', '--tenant', 'acme');
    expect(submitted).toEqual({ code: 0, stdout: expect.stringMatching(/^\S+\n$/), stderr: `submitted; follow it with: chorus status ${submitted.stdout.trim()} --tenant acme\n` });
    const found = await chorus(f, 'status', id, '--tenant', 'acme');
    expect({ code: found.code, stderr: found.stderr }).toEqual({ code: 0, stderr: '' });
    expect(found.stdout).toMatch(/^status: completed/);
  });

  it('chorus dead-letters - the newest dead letters first, with the reason and each invalid field; --tenant narrows them; --json', async () => {
    const before = JSON.parse((await chorus(f, 'dead-letters', '--json')).stdout) as unknown[];
    await f.chorus.bus.js.publish('chorus.wf.acme.query.dl-cli-1', JSON.stringify({ correlation_id: 'dl-cli-1', message_type: 'query' }));
    await f.chorus.bus.js.publish('chorus.wf.globex.query.dl-cli-2', 'not json');
    const letters = await waitFor(async () => {
      const r = JSON.parse((await chorus(f, 'dead-letters', '--json', '--limit', '50')).stdout) as Array<{ subject: string; reason: string; correlation_id: string; errors: Array<{ field: string }> }>;
      return r.length >= before.length + 2 ? r : undefined;
    }, { what: 'the two dead letters' });
    expect(letters.slice(0, 2).map((l) => [l.subject, l.reason])).toEqual([
      ['chorus.wf.globex.query.dl-cli-2', 'invalid_envelope'],
      ['chorus.wf.acme.query.dl-cli-1', 'invalid_envelope'],
    ]);
    expect(letters[1].errors.map((e) => e.field)).toEqual(expect.arrayContaining(['message_id', 'tenant_id', 'payload']));
    const acme = await chorus(f, 'dead-letters', '--tenant', 'acme');
    expect(acme.code).toBe(0);
    expect(acme.stdout).toMatch(/^\S+Z {2}invalid_envelope {2}chorus\.wf\.acme\.query\.dl-cli-1 {2}\(stream seq \d+, 1 delivery\)\n {4}\S+: /);
    expect(acme.stdout).not.toMatch(/globex/);
    expect((await chorus(f, 'dead-letters', '--tenant', 'nobody')).stdout).toBe('no dead letters\n');
  });

  it('chorus bench - runs the benchmark script with its own options (here its help), needing no running Chorus', async () => {
    const help = await run(process.execPath, [BIN, 'bench', '--help'], { env: { ...process.env, NATS_URL: 'nats://127.0.0.1:1' } });
    expect(help.stdout).toMatch(/^Usage: chorus bench \[options\]\n/);
    expect(help.stdout).toMatch(/--only a,b/);
    expect(help.stdout).toMatch(/--concurrency 1,16,64/);
  });

  it('chorus bench - a bad option is a usage error (exit 2) listing every problem, with no stack trace and nothing run', async () => {
    const bogus = await runCli(['bench', '--bogus']);
    expect({ code: bogus.code, stdout: bogus.stdout }).toEqual({ code: 2, stdout: '' });
    expect(bogus.stderr).toMatch(/^chorus bench: invalid options:\n {2}- --bogus is not an option\n\nUsage: chorus bench \[options\]/);
    expect(bogus.stderr).not.toMatch(/ at |Error/);

    const numbers = await runCli(['bench', '--only', 'floor-core', '--concurrency', 'abc', '--duration', '-5', '--warmup', 'soon']);
    expect({ code: numbers.code, stdout: numbers.stdout }).toEqual({ code: 2, stdout: '' });
    expect(numbers.stderr).toContain('  - --concurrency must be a comma-separated list of positive integers, got "abc"\n  - --duration must be a positive number of seconds, got "-5"\n  - --warmup must be a number of seconds, 0 or more, got "soon"\n');

    const names = await runCli(['bench', '--only', 'rrf,floor-cor', '--hub-checkpoints', '0']);
    expect(names.code).toBe(2);
    expect(names.stderr).toContain('  - --only floor-cor: no such system or section\n  - --hub-checkpoints must be a comma-separated list of positive integers, got "0"\n');
  });

  it("chorus - with no command: the usage on stderr, exit 2; --help: the usage on stdout, exit 0, a command's own after a command", async () => {
    const none = await runCli([]);
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 2, stdout: '' });
    expect(none.stderr).toMatch(/^chorus: missing command\n\nUsage: chorus <command> \[options\]/);
    const help = await runCli(['--help']);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: chorus <command> \[options\]/);
    // A command's --help: its own synopsis and options, not every command's.
    const list = await runCli(['list', '--help']);
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: '' });
    expect(list.stdout).toMatch(/^Usage: chorus list \[--status S\] [\s\S]*?\[--tenant T\]\n\n/);
    expect(list.stdout).toMatch(/^ {2}--cursor C {2,}/m);
    expect(list.stdout).not.toMatch(/--wait|Commands:/);
  });

  it("chorus - another command's options, unknown options and bad values: a usage error naming each at once (exit 2), nothing sent", async () => {
    // An unreachable NATS: a command that tried to send would exit 3, not 2.
    const nowhere = ['--nats', 'nats://127.0.0.1:1'];
    const query = await runCli(['query', 'x', '--since', '2026-01-01', '--limit', '3', '--status', 'failed', '--cursor', 'abc', ...nowhere]);
    expect({ code: query.code, stdout: query.stdout }).toEqual({ code: 2, stdout: '' });
    expect(query.stderr).toMatch(/^chorus: invalid options:\n {2}--since is not an option of query \(list takes it\)\n {2}--limit is not an option of query \(list and dead-letters take it\)\n {2}--status .*\n {2}--cursor .*\n\nUsage: chorus query /);
    const letters = await runCli(['dead-letters', '--status', 'failed', ...nowhere]);
    expect({ code: letters.code, stderr: letters.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^chorus: --status is not an option of dead-letters \(list takes it\)\n\nUsage: chorus dead-letters /) });
    for (const argv of [['cancel', 'id', '--deadline-ms', '5'], ['status', 'id', '--profile', 'x', '--require-all']]) {
      expect((await runCli([...argv, ...nowhere])).code).toBe(2);
    }
    // Node's parseArgs named only the first problem, in its words ("argument is ambiguous", "place it … after '--'").
    const values = await runCli(['query', 'x', '--top-k', 'abc', '--deadline-ms', '-5', '--idempotency-key', 'a b', ...nowhere]);
    expect({ code: values.code, stderr: values.stderr }).toEqual({
      code: 2,
      stderr:
        'chorus: invalid options:\n  --top-k must be a positive integer\n  --deadline-ms must be a positive integer\n  --idempotency-key must be 1 to 256 printable ASCII characters, no spaces\n(chorus query --help shows its options)\n',
    });
    const bogus = await runCli(['list', '--bogus', ...nowhere]);
    expect({ code: bogus.code, stderr: bogus.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^chorus: --bogus is not an option\n\nUsage: chorus list /) });
  });

  it('chorus watch, status, history, list - a reader that closes stdout early ends the command quietly, exit 0', async () => {
    const q = await chorus(f, 'query', 'what is a closed pipe', '--wait', '--json');
    const id = JSON.parse(q.stdout).correlation_id as string;
    const commands = [['watch', id], ['watch', id, '--json'], ['status', id], ['history', id], ['list'], ['list', '--json']];
    const runs = await Promise.all(commands.map(async (args) => ({ args, ...(await chorusIntoClosedPipe(f, ...args)) })));
    expect(runs).toEqual(commands.map((args) => ({ args, code: 0, stderr: '' })));
  });

  it('chorus bench - a reader that closes stdout early ends the benchmark at its first line, quietly, exit 0', async () => {
    // It died of the EPIPE with a stack trace (exit 1). A system's level is what ends it here, with
    // the floor's nats-server and hop process started (its exit handlers stop them; not checked here:
    // other suites start and stop nats-servers meanwhile).
    expect(await chorusIntoClosedPipe(f, 'bench', '--quick', '--only', 'floor-core', '--no-write')).toEqual({ code: 0, stderr: '' });
  });

  it('chorus query - an invalid value is reported by the flag that gave it, not by the envelope field it set', async () => {
    const session = await chorus(f, 'query', 'x', '--session', 'bad session');
    expect({ code: session.code, stderr: session.stderr }).toEqual({ code: 2, stderr: 'chorus: invalid query:\n  --session must match [A-Za-z0-9_-]{1,64}\n' });
    const more = await chorus(f, 'query', 'x', '--profile', 'Bad', '--top-k', '1000', '--tenant', 'Not A Tenant');
    expect(more.code).toBe(2);
    expect(more.stderr).toMatch(/^ {2}--profile: each profile must match/m);
    expect(more.stderr).toMatch(/^ {2}--top-k must not be greater than \d+$/m);
    expect(more.stderr).toMatch(/^ {2}--tenant must match/m);
    expect(more.stderr).not.toMatch(/payload|top_k|tenant_id/);
    // With --json, also a JSON error on stdout, each field by its flag.
    const json = await chorus(f, 'query', 'x', '--session', 'bad session', '--json');
    expect({ code: json.code, stdout: JSON.parse(json.stdout) }).toEqual({
      code: 2,
      stdout: { error: { error_type: 'INVALID_ENVELOPE', message: 'invalid query', errors: [{ field: '--session', messages: ['--session must match [A-Za-z0-9_-]{1,64}'] }] } },
    });
  });

  it('chorus - on a NATS server that requires users: a refusal says so and how to authenticate (exit 2); the cli user of CHORUS_NATS_CREDENTIALS gets in', async () => {
    const secured = await startNats({ own: true, extraConfig: readFileSync(join(__dirname, '..', 'infra', 'nats', 'auth.conf'), 'utf8') });
    try {
      const anonymous = await runCli(['list', '--nats', secured.url]);
      expect(anonymous.code).toBe(2);
      expect(anonymous.stderr).toMatch(/^chorus: NATS at nats:\/\/\S+ refused the CLI's credentials \(Authorization Violation\); it connected without credentials/);
      expect(anonymous.stderr).toMatch(/CHORUS_NATS_CREDENTIALS=<file> \(it connects as the file's "cli" user; infra\/nats\/dev-credentials.json/);
      expect(anonymous.stderr).not.toMatch(/Is it running/);

      const wrong = await runCli(['list', '--nats', secured.url], { NATS_USER: 'chorus-cli', NATS_PASS: 'not-the-password' });
      expect({ code: wrong.code, stderr: wrong.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/refused the CLI's credentials \(Authorization Violation\); it connected as chorus-cli \(NATS_USER\)/) });

      // Past authorization, this bare server has no Chorus: said so (exit 3), not "cannot reach".
      const cli = await runCli(['list', '--nats', secured.url], { CHORUS_NATS_CREDENTIALS: join(__dirname, '..', 'infra', 'nats', 'dev-credentials.json') });
      expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 3, stderr: expect.stringMatching(/^chorus: NATS at nats:\/\/\S+ answers, but has no CHORUS_WF stream: Chorus has not run against this server/) });

      // A credentials file without a cli user is a bad setting, not an unreachable Chorus.
      const file = join(tmpdir(), `chorus-cli-credentials-${process.pid}.json`);
      writeFileSync(file, JSON.stringify({ hub: { user: 'chorus-hub', pass: 'hub-dev-only-password' } }));
      const noCli = await runCli(['list', '--nats', secured.url], { CHORUS_NATS_CREDENTIALS: file }).finally(() => rmSync(file, { force: true }));
      expect({ code: noCli.code, stderr: noCli.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/CHORUS_NATS_CREDENTIALS has no user for cli/) });
    } finally {
      await secured.stop();
    }
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
    const first = await chorus(f, 'query', 'what is a key', '--idempotency-key', reuse);
    // Without --wait, stdout is the id alone (ID=$(chorus query …)); what next, on stderr.
    expect(first).toEqual({ code: 0, stdout: expect.stringMatching(/^ik_\w+\n$/), stderr: `submitted; follow it with: chorus status ${first.stdout.trim()}\n` });
    // The same key and query again: that workflow, and said so; nothing new started.
    const again = await chorus(f, 'query', 'what is a key', '--idempotency-key', reuse);
    expect(again).toEqual({ code: 0, stdout: first.stdout, stderr: `already submitted (this is that workflow, nothing new started); follow it with: chorus status ${first.stdout.trim()}\n` });
    expect(JSON.parse((await chorus(f, 'query', 'what is a key', '--idempotency-key', reuse, '--json')).stdout)).toEqual({ correlation_id: expect.stringMatching(/^ik_/), duplicate: true });
    const reused = await chorus(f, 'query', 'what is another key', '--idempotency-key', reuse);
    expect({ code: reused.code, stderr: reused.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/already named workflow ik_\w+, started with another request \(query differs\)/) });
    expect({ code: page.code, stderr: page.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/limit must be an integer from 1 to 500/) });

    const missing = await chorus(f, 'status', 'no-such-workflow');
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 1, stderr: "chorus: no workflow no-such-workflow in tenant default (another tenant's? use --tenant T)\n" });

    const { code, stderr } = await run(process.execPath, [BIN, 'status', 'x', '--nats', 'nats://127.0.0.1:1'], { env: { ...process.env, NATS_URL: '' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    // The CLI's own hint, and the address once: not the apps' "no NATS server answers … set NATS_URL" on top.
    expect({ code, stderr }).toEqual({ code: 3, stderr: 'chorus: cannot reach Chorus at nats://127.0.0.1:1: connection refused\nIs it running? Start it with: npm start\n' });
    const unreachable = await runCli(['status', 'x', '--json', '--nats', 'nats://127.0.0.1:1']);
    expect({ code: unreachable.code, stdout: JSON.parse(unreachable.stdout) }).toEqual({
      code: 3,
      stdout: { error: { error_type: 'NATS_UNREACHABLE', message: 'cannot reach Chorus at nats://127.0.0.1:1: connection refused' } },
    });

    // A NATS server that answers but has no Chorus streams: exit 3 at once, not a process kept alive by its connection.
    const bare = await startNats({ own: true });
    try {
      const started = Date.now();
      const empty = await run(process.execPath, [BIN, 'list', '--nats', bare.url], { env: { ...process.env, NATS_URL: '' }, timeout: 20_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect({ code: empty.code, stderr: empty.stderr }).toEqual({ code: 3, stderr: expect.stringMatching(/answers, but has no CHORUS_WF stream: Chorus has not run against this server\nStart it with: npm start/) });
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
