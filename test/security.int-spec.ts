import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bus, ChorusClient, DurableConsumer, defaultBusOptions, isTransient, readDeadLetters, serviceInboxPrefix, type ServiceUser } from '@chorus/bus';
import { createEnvelope } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { AckPolicy } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { LogCapture, waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { startApp, type AppProcess } from './processes';

const AUTH = readFileSync(join(__dirname, '..', 'infra', 'nats', 'auth.conf'), 'utf8');
const CREDENTIALS_FILE = join(__dirname, '..', 'infra', 'nats', 'dev-credentials.json');
const CREDENTIALS = JSON.parse(readFileSync(CREDENTIALS_FILE, 'utf8')) as Record<string, { user: string; pass: string }>;
const log = createRootLogger({ name: 'test', level: 'silent' });

/** Chorus on a nats-server that knows one user per service, each allowed only its own subjects. */
describe('NATS security', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_NATS_CREDENTIALS: CREDENTIALS_FILE }, { own: true, extraConfig: AUTH });
  });
  afterAll(async () => {
    await f?.stop();
  });

  const violations = () => readFileSync(f.nats.logFile!, 'utf8').split('\n').filter((l) => /Violation|Authorization Error/i.test(l));

  it('all-in-one - every app connects as its own user and a query completes, with no permission violation', async () => {
    const r = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how does chorus drop duplicates' });
    expect(r.body.status).toBe('completed');
    expect({ used: r.body.result.provenance.profiles_used.sort(), degraded: r.body.degradations }).toEqual({ used: ['bm25', 'trigram'], degraded: [] });
    expect(violations()).toEqual([]);
  });

  it('retry - the hub, as its own user, publishes the query of a retry; with no permission violation', async () => {
    const failed = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'profile:nosuch what does the hub record' });
    expect(failed.body.status).toBe('failed');
    const r = await postJson(`${f.url}/v1/workflows/${failed.body.correlation_id}/retry`, {});
    expect(r.status).toBe(202);
    // A 202 comes once the hub has recorded the retry, whose query it published as user chorus-hub.
    expect((await getJson(`${f.url}/v1/workflows/${r.body.correlation_id}`)).body.retry_of).toBe(failed.body.correlation_id);
    expect(violations()).toEqual([]);
  });

  it('reads by id as the ingress and the CLI users - just accepted is found, unknown is 404 / null, with no permission violation', async () => {
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record' });
    expect(submitted.status).toBe(202);
    const id = submitted.body.correlation_id as string;
    expect((await getJson(`${f.url}/v1/workflows/${id}`)).status).toBe(200);
    expect((await getJson(`${f.url}/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903bb`)).status).toBe(404);
    expect((await getJson(`${f.url}/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903bb/history`)).status).toBe(404);
    const cli = await Bus.connect({ ...defaultBusOptions(), servers: [f.nats.url], name: 'cli-user', user: CREDENTIALS.cli.user, pass: CREDENTIALS.cli.pass, inboxPrefix: serviceInboxPrefix('cli') }, log);
    try {
      const client = new ChorusClient(cli, {
        agent: 'cli',
        correlation: f.config.correlation,
        defaultDeadlineMs: 10_000,
        defaultTopK: 10,
        requestTimeoutMs: 2000,
        terminalGraceMs: 1000,
      });
      const acceptedWithinMs = f.config.workflow.maxDeadlineMs + 60_000;
      expect((await client.find(id, undefined, { acceptedWithinMs }))?.correlation_id).toBe(id);
      expect(await client.find('01a22d8c-c74d-773c-8da3-835b380903bc', undefined, { acceptedWithinMs })).toBeNull();
      // `chorus dead-letters` reads the dead-letter stream as the cli user.
      expect(await readDeadLetters(cli, { limit: 5 })).toBeInstanceOf(Array);
    } finally {
      await cli.close();
    }
    expect(violations()).toEqual([]);
  });

  it('a service cannot publish a message type it does not own', async () => {
    const intent = await Bus.connect({ ...defaultBusOptions(), servers: [f.nats.url], name: 'intent-as-attacker', user: CREDENTIALS.intent.user, pass: CREDENTIALS.intent.pass, inboxPrefix: serviceInboxPrefix('intent'), requestTimeoutMs: 1500 }, log);
    try {
      const forged = createEnvelope({
        messageType: 'response',
        correlationId: 'forged-1',
        tenantId: 'default',
        agent: 'intent',
        deadline: new Date(Date.now() + 10_000),
        payload: { query: 'x', answer: 'forged', results: [], provenance: { sources: [], profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 10 }, method: 'x' } } as never,
      });
      await expect(intent.publish(forged)).rejects.toThrow(/permission|timeout|no responders/i);
      const stored = await f.chorus.bus.jsm.streams.info(f.config.bus.workflowStream, { subjects_filter: 'chorus.wf.*.response.forged-1' });
      expect(stored.state.subjects?.['chorus.wf.default.response.forged-1'] ?? 0).toBe(0);
      expect(violations().some((l) => l.includes('chorus.wf.default.response.forged-1'))).toBe(true);
      // A JetStream API the user may not use fails at once, as an error no retry gets past (not "NATS away").
      const refused = await intent.jsm.streams.getMessage(`KV_${f.config.hub.bucket}`, { last_by_subj: `$KV.${f.config.hub.bucket}.x` }).then(
        () => null,
        (e: unknown) => e,
      );
      expect({ error: String(refused), transient: isTransient(refused) }).toEqual({ error: expect.stringMatching(/permission/i), transient: false });
    } finally {
      await intent.close();
    }
  });

  it("a service cannot read another's replies: only its own inboxes, not _INBOX.>", async () => {
    // With `_INBOX.>` the profile user (which may not read the workflow stream) read every tenant's
    // envelopes as JetStream delivered them to the ingress's watches, and every hub answer.
    const profile = await connect({ servers: f.nats.url, user: CREDENTIALS.profile.user, pass: CREDENTIALS.profile.pass });
    try {
      const refused: string[] = [];
      const watching = (async () => {
        for await (const s of profile.status()) if (s.type === 'error') refused.push(String(s.error));
      })();
      const seen: string[] = [];
      for (const subject of ['_INBOX.>', '_INBOX.chorus-ingress.>']) {
        const sub = profile.subscribe(subject, { callback: (_e, m) => {
          seen.push(m.subject);
        } });
        void sub.closed.catch(() => undefined);
      }
      await profile.flush();
      const r = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the correlation hub keep', tenant_id: 'victim' });
      expect(r.body.status).toBe('completed');
      await getJson(`${f.url}/v1/workflows/${r.body.correlation_id}/history?tenant_id=victim`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect({ seen, refused: refused.length > 0 }).toEqual({ seen: [], refused: true });
      void watching;
    } finally {
      await profile.close().catch(() => undefined);
    }
  });

  it('duplicate notices: the profile user may publish none (nor dead letters); one about another workflow than its subject names is not counted', async () => {
    const r = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub count', tenant_id: 'acme' });
    expect(r.body.status).toBe('completed');
    const id = r.body.correlation_id as string;
    const notice = { idempotency_key: 'k', correlation_id: id, tenant_id: 'acme', message_type: 'query', agent: 'ingress', message_id: 'm', stored_seq: 1, dropped_at: new Date().toISOString() };
    const profile = await connect({ servers: f.nats.url, user: CREDENTIALS.profile.user, pass: CREDENTIALS.profile.pass, inboxPrefix: serviceInboxPrefix('profile') });
    const intent = await connect({ servers: f.nats.url, user: CREDENTIALS.intent.user, pass: CREDENTIALS.intent.pass, inboxPrefix: serviceInboxPrefix('intent') });
    try {
      profile.publish(`chorus.dup.acme.query.${id}`, JSON.stringify(notice));
      profile.publish('chorus.dlq.acme.query', JSON.stringify({ reason: 'forged' }));
      // The intent user may publish notices (it publishes envelopes), but only its subject counts,
      intent.publish(`chorus.dup.globex.query.${id}`, JSON.stringify(notice));
      // and only what the stream bears out: the workflow's query is stored under another key than this one.
      const query = await f.chorus.bus.lastStoredMessage(`chorus.wf.acme.query.${id}`);
      intent.publish(`chorus.dup.acme.query.${id}`, JSON.stringify({ ...notice, stored_seq: query!.seq, idempotency_key: 'not-its-key' }));
      intent.publish(`chorus.dup.acme.query.${id}`, JSON.stringify({ ...notice, stored_seq: 999_999 }));
      await Promise.all([profile.flush(), intent.flush()]);
      await waitFor(async () => {
        const c = await f.chorus.bus.jsm.consumers.info(f.config.bus.duplicateStream, 'hub_duplicates');
        return c.delivered.stream_seq >= 3 && c.num_pending === 0 && c.num_ack_pending === 0 ? true : undefined;
      }, { what: 'the hub through the notices' });
      expect((await getJson(`${f.url}/v1/workflows/${id}?tenant_id=acme`)).body.duplicates_dropped).toBe(0);
      expect(violations().filter((l) => l.includes(`chorus.dup.acme.query.${id}`) || l.includes('chorus.dlq.acme.query')).length).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.all([profile.close(), intent.close()]);
    }
  });

  const connectAs = (user: ServiceUser) =>
    Bus.connect({ ...defaultBusOptions(), servers: [f.nats.url], name: `${user}-in-test`, user: CREDENTIALS[user].user, pass: CREDENTIALS[user].pass, inboxPrefix: serviceInboxPrefix(user), requestTimeoutMs: 2000 }, log);

  it("an agent's durable consumer: the ingress and CLI users may not delete, make or change it, though their reads make and delete consumers of their own (found by the security exploration)", async () => {
    const stream = f.config.bus.workflowStream;
    const elsewhere = { deliver_subject: '_INBOX.elsewhere', filter_subject: 'chorus.wf.none.query.none', ack_policy: AckPolicy.Explicit };
    for (const user of ['ingress', 'cli'] as const) {
      const bus = await connectAs(user);
      try {
        for (const durable of ['intent_query', 'responder_tool_results', 'hub_all']) {
          await expect(bus.jsm.consumers.delete(stream, durable)).rejects.toThrow(/permission/i);
          await expect(bus.jsm.consumers.add(stream, { durable_name: durable, ...elsewhere })).rejects.toThrow(/permission/i);
          await expect(bus.jsm.consumers.update(stream, durable, { filter_subject: elsewhere.filter_subject })).rejects.toThrow(/permission/i);
          // The unnamed create subject: a config naming an existing consumer there changes it (nats-server 2.9).
          const unnamed = JSON.stringify({ stream_name: stream, config: { name: durable, filter_subject: elsewhere.filter_subject, ack_policy: 'explicit' } });
          await expect(bus.nc.request(`$JS.API.CONSUMER.CREATE.${stream}`, unnamed, { timeout: 2000 })).rejects.toThrow(/permission/i);
        }
      } finally {
        await bus.close();
      }
    }
    for (const durable of ['intent_query', 'responder_tool_results', 'hub_all']) {
      const info = await f.chorus.bus.jsm.consumers.info(stream, durable);
      expect({ durable, push: info.config.deliver_subject ?? null, filter: info.config.filter_subject }).toEqual({ durable, push: null, filter: durable === 'hub_all' ? 'chorus.wf.>' : expect.stringMatching(/^chorus\.wf\.\*\./) });
    }
    // Their reads (ordered consumers, made and deleted by name) still work, and so does every agent.
    const r = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub keep of a workflow' });
    expect(r.body.status).toBe('completed');
    expect((await getJson(`${f.url}/v1/workflows/${r.body.correlation_id}/history`)).status).toBe(200);
  });

  it('an agent, as its own user, replaces its durable consumer when it finds another under its name (here made by the hub user, which administers the stream)', async () => {
    const stream = f.config.bus.workflowStream;
    const intent = await connectAs('intent');
    const hub = await connectAs('hub');
    const capture = new LogCapture();
    const logs = createRootLogger({ name: 'replica', level: 'info', destination: capture });
    // A second replica of the intent agent (its own user, its own consumer check every 300 ms), giving back what it gets.
    const replica = new DurableConsumer(intent, { stream, durable: 'intent_query', filter: 'chorus.wf.*.query.*', ackWaitMs: 30_000, maxDeliver: 5, concurrency: 4, stallCheckMs: 300 }, async (m) => m.nak(), logs);
    try {
      await replica.start();
      await hub.jsm.consumers.delete(stream, 'intent_query');
      await hub.jsm.consumers.add(stream, { durable_name: 'intent_query', deliver_subject: '_INBOX.elsewhere', filter_subject: 'chorus.wf.none.query.none', ack_policy: AckPolicy.Explicit });
      await waitFor(async () => {
        const info = await f.chorus.bus.jsm.consumers.info(stream, 'intent_query');
        return !info.config.deliver_subject && info.config.filter_subject === 'chorus.wf.*.query.*';
      }, { what: 'the consumer replaced by the agent', timeoutMs: 10_000 });
      expect(capture.lines.filter((l) => /could not delete/.test(String(l.msg)))).toEqual([]);
    } finally {
      await replica.stop(0);
      await intent.close();
      await hub.close();
    }
    const r = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub keep of a workflow' });
    expect(r.body.status).toBe('completed');
  }, 30_000);

  it('a wrong password is refused', async () => {
    await expect(Bus.connect({ ...defaultBusOptions(), servers: [f.nats.url], name: 'nobody', user: 'chorus-hub', pass: 'wrong' }, log)).rejects.toThrow(/cannot connect|authorization/i);
  });
});

describe('NATS security, one process per app', () => {
  const apps: AppProcess[] = [];
  let f: ChorusFixture;

  beforeAll(async () => {
    // Only the ingress in-process; every other app its own process, all with their own users.
    f = await startChorusFixture({ CHORUS_NATS_CREDENTIALS: CREDENTIALS_FILE }, { own: true, extraConfig: AUTH }, ['hub']);
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await f?.stop();
  });

  it('multi-process - each app as its own user completes a query', async () => {
    const env = { NATS_URL: f.nats.url, CHORUS_NATS_CREDENTIALS: CREDENTIALS_FILE, CHORUS_LOG_LEVEL: 'info', CHORUS_HTTP_PORT: '0' };
    const agents = ['profile', 'intent', 'planner', 'search', 'responder'].map((app) => startApp(app, env));
    apps.push(...agents);
    await Promise.all(agents.map((a) => a.waitFor(/ ready"/, 45_000)));
    const ingress = startApp('ingress', env);
    apps.push(ingress);
    const [, url] = await ingress.waitFor(/"url":"(http:\/\/[^"]+)","msg":"ingress listening"/, 45_000);
    const r = await postJson(`${url}/v1/queries?wait=true`, { query: 'what does the correlation hub keep' });
    expect(r.body.status).toBe('completed');
    const violations = readFileSync(f.nats.logFile!, 'utf8').split('\n').filter((l) => /Violation/i.test(l));
    expect(violations).toEqual([]);
  });
});
