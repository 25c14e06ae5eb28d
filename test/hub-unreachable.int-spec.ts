import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';
import { readSse } from './sse';

/**
 * The watchers of a workflow (SSE, A2A, `chorus watch`) when the hub stops answering for good: each stops waiting
 * CHORUS_WATCH_GRACE_MS after the workflow's deadline and says why, instead of waiting for ever.
 */
describe('watchers when the hub is gone', () => {
  let f: ChorusFixture;
  const GRACE_MS = 400;

  // A fresh Chorus for each test, since each stops its hub.
  beforeEach(async () => {
    f = await startChorusFixture({ CHORUS_WATCH_GRACE_MS: String(GRACE_MS), CHORUS_DEFAULT_DEADLINE_MS: '1500' });
    // Without a responder the workflow stays running until its deadline, which only the hub enforces.
    await stopApp(f, 'responder');
  });
  afterEach(async () => {
    await f?.stop();
  });

  it('SSE - a stream whose hub stops before the workflow ends closes with one `unconfirmed` event, no `terminal`', async () => {
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record', deadline_ms: 1500 });
    expect(submitted.status).toBe(202);
    const id = submitted.body.correlation_id as string;
    let opened!: () => void;
    const streamOpen = new Promise<void>((resolve) => (opened = resolve));
    const reading = readSse(`${f.url}/v1/workflows/${id}/events`, {}, 15_000, () => opened());
    await streamOpen;
    await stopApp(f, 'hub');

    const { status, events } = await reading;
    expect(status).toBe(200);
    expect(events.filter((e) => e.event === 'terminal')).toEqual([]);
    const last = events[events.length - 1];
    expect(last.event).toBe('unconfirmed');
    expect(last.data).toEqual(
      expect.objectContaining({ correlation_id: id, deadline: expect.any(String), status_url: `/v1/workflows/${id}`, reason: expect.stringMatching(/hub has not confirmed how workflow .* ended/) }),
    );
    // It waited out the deadline and the grace before giving up.
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(last.data.deadline) + GRACE_MS);
    expect(events.filter((e) => e.event === 'unconfirmed')).toHaveLength(1);
  });

  it('A2A - a streamed task whose hub stops before the workflow ends is left working, with the reason, after the grace', async () => {
    const client = await new ClientFactory().createFromUrl(f.url);
    const stream = client.sendMessageStream({
      message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'how are duplicates dropped' } }] },
    } as never);
    const events: any[] = [];
    for await (const event of stream as AsyncIterable<any>) {
      events.push(event);
      if (events.length === 1) await stopApp(f, 'hub');
    }
    // Each streamed event is { payload: { $case: 'task' | 'statusUpdate' | ..., value } }.
    const statuses = events.map((e) => e.payload?.value?.status).filter(Boolean);
    const states = statuses.map((s) => s.state);
    expect(states).not.toContain(TaskState.TASK_STATE_COMPLETED);
    expect(states).not.toContain(TaskState.TASK_STATE_FAILED);
    const last = statuses[statuses.length - 1];
    expect(last.state).toBe(TaskState.TASK_STATE_WORKING);
    const text = (last.message?.parts ?? []).map((p: any) => p.content?.value ?? '').join('');
    expect(text).toMatch(/hub has not confirmed how workflow .* ended/);
  });

  it('chorus watch - a watch whose hub stops before the workflow ends exits non-zero with the reason, after the grace', async () => {
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record', deadline_ms: 1500 });
    const id = submitted.body.correlation_id as string;
    const bin = join(__dirname, '..', 'bin', 'chorus.js');
    const child = spawn(process.execPath, [bin, 'watch', id, '--nats', f.nats.url], {
      env: { ...process.env, NATS_URL: '', CHORUS_WATCH_GRACE_MS: String(GRACE_MS) },
    });
    let stdout = '';
    let hubStopped: Promise<void> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // The first step line means the CLI has the workflow and is watching it.
      hubStopped ??= stopApp(f, 'hub');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    await hubStopped;
    expect(stdout).toMatch(/hub has not confirmed how workflow .* ended/);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
  });
});
