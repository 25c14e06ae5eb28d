import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { workflowSubject } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { openApiChecker } from './openapi.check';

const run = promisify(execFile);
/** The compiled CLI (`npm test` builds it first), as test/cli.e2e.int-spec.ts runs it. */
const BIN = process.env.CHORUS_CLI_BIN ?? join(__dirname, '..', 'bin', 'chorus.js');

describe('Idempotency-Key past the ledger', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    // The ledger forgets a finished workflow after 2.5 s, and the stream's duplicate window is 1 s:
    // a query published again after that would be stored again, as happens past the real window.
    f = await startChorusFixture({
      CHORUS_MAX_DEADLINE_MS: '1500',
      CHORUS_DEFAULT_DEADLINE_MS: '1500',
      CHORUS_HUB_RETENTION_MS: '2500',
      CHORUS_DUPLICATE_WINDOW_MS: '1000',
    });
  });
  afterAll(async () => {
    await f?.stop();
  });

  async function chorus(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return run(process.execPath, [BIN, ...args, '--nats', f.nats.url], { env: { ...process.env, NATS_URL: '' }, timeout: 30_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  }

  /** How many query messages the workflow stream holds for the workflow. */
  async function storedQueries(id: string): Promise<number> {
    const subject = workflowSubject('default', 'query', id);
    const info = await f.chorus.bus.jsm.streams.info(f.config.bus.workflowStream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  }

  it('Idempotency-Key - a key whose workflow ended and left the ledger is a 409 naming it (HTTP, ?wait=true, CLI), nothing is published, and a new key starts a new workflow', async () => {
    const key = `expiring-key-${Date.now()}`;
    const request = { query: 'retention test', profiles: ['nope'] };
    const first = await postJson(`${f.url}/v1/queries?wait=true`, request, { 'idempotency-key': key });
    expect({ status: first.status, workflow: first.body.status }).toEqual({ status: 200, workflow: 'failed' });
    const id = first.body.correlation_id as string;
    expect(id).toMatch(/^ik_/);

    // Still in the ledger: the same workflow, as before.
    const again = await postJson(`${f.url}/v1/queries`, request, { 'idempotency-key': key });
    expect({ status: again.status, id: again.body.correlation_id }).toEqual({ status: 200, id });

    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).status === 404, { timeoutMs: 8000, intervalMs: 250, what: 'the workflow left the ledger' });
    // Past the duplicate window too, so a query published again would be stored.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await storedQueries(id)).toBe(1);

    const conflict = {
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringMatching(new RegExp(`workflow ${id}, which ended \\(failed at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) and has left the hub's ledger \\(finished workflows are kept CHORUS_HUB_RETENTION_MS\\).*use a new key to start a new workflow`)),
      status: 'failed',
      error_type: 'IDEMPOTENCY_KEY_EXPIRED',
    };
    const plain = await postJson(`${f.url}/v1/queries`, request, { 'idempotency-key': key });
    expect({ status: plain.status, body: plain.body }).toEqual({ status: 409, body: conflict });
    expect((await openApiChecker(f.url))('/v1/queries', 'post', plain)).toBeNull();

    const started = Date.now();
    const waited = await postJson(`${f.url}/v1/queries?wait=true`, request, { 'idempotency-key': key });
    expect({ status: waited.status, body: waited.body }).toEqual({ status: 409, body: conflict });
    expect(Date.now() - started).toBeLessThan(1500);

    const cli = await chorus('query', 'retention test', '--profile', 'nope', '--idempotency-key', key);
    expect({ code: cli.code, stdout: cli.stdout, stderr: cli.stderr }).toEqual({ code: 2, stdout: '', stderr: `chorus: ${plain.body.message}\n` });
    const cliJson = await chorus('query', 'retention test', '--profile', 'nope', '--idempotency-key', key, '--wait', '--json');
    expect({ code: cliJson.code, stdout: JSON.parse(cliJson.stdout) }).toEqual({
      code: 2,
      stdout: { error: { error_type: 'IDEMPOTENCY_KEY_EXPIRED', message: plain.body.message, status: 'failed' } },
    });

    // Nothing was published, so the hub opened no record either.
    expect(await storedQueries(id)).toBe(1);
    expect((await getJson(`${f.url}/v1/workflows/${id}`)).status).toBe(404);

    const fresh = await postJson(`${f.url}/v1/queries`, request, { 'idempotency-key': `${key}-new` });
    expect(fresh.status).toBe(202);
    expect(fresh.body.correlation_id).not.toBe(id);
    expect(await storedQueries(fresh.body.correlation_id as string)).toBe(1);
  });
});
