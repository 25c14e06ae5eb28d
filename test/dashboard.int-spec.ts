import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';
import { startResponder } from '../apps/responder/src';
import { artifactDir, launchChromium, openPage } from './browser';

const SHOTS = artifactDir('dashboard');
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
// Functions passed to page.evaluate run in the browser: they reach its globals through globalThis
// (this project's TypeScript has no DOM library).
const live = (page: Page) => page.evaluate(() => (globalThis as unknown as { __chorusDashboard: { live: Record<string, number> } }).__chorusDashboard.live);

const KEY = 'acme-dashboard-key-0123456789';
let browser: Browser;
let dev: ChorusFixture;
let keyed: ChorusFixture;

// Chromium and both Chorus instances start together: each takes seconds, mostly waiting.
beforeAll(async () => {
  const started = await Promise.allSettled([launchChromium(), startChorusFixture(), startChorusFixture({ CHORUS_API_KEYS: `${KEY}:acme` })]);
  [browser, dev, keyed] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined)) as [Browser, ChorusFixture, ChorusFixture];
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
});
afterAll(async () => {
  await Promise.allSettled([browser?.close(), dev?.stop(), keyed?.stop()]);
});

describe('dashboard (development mode, no API keys)', () => {
  let f: ChorusFixture;
  let page: Page;
  let errors: string[];
  let id: string;

  beforeAll(async () => {
    f = dev;
    ({ page, errors } = await openPage(browser));
  });
  afterAll(async () => {
    await page?.context().close();
  });
  afterEach(() => {
    expect(errors).toEqual([]);
  });

  it('workflow list - a workflow submitted while the page is open appears, live, and completes', async () => {
    await page.goto(`${f.url}/#/`);
    await page.locator('#workflows.is-live').waitFor();
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));

    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the correlation hub keep' });
    expect(submitted.status).toBe(202);
    id = submitted.body.correlation_id;
    await page.locator(`.workflows-table tr[data-key="${id}"][data-status="completed"]`).waitFor();

    const row = page.locator(`.workflows-table tr[data-key="${id}"]`);
    expect(await row.locator('.wf-link').textContent()).toBe('what does the correlation hub keep');
    expect(await row.locator('.agent-chip').allTextContents()).toEqual(['ingress', 'intent', 'planner', 'search', 'responder']);
    expect(await row.locator('td').nth(5).textContent()).toMatch(/\d+(\.\d+)? m?s$/);
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await page.locator('.kpi[data-kpi="completed"] .kpi-value', { hasText: /^[1-9]/ }).waitFor();
    await page.locator('#latency svg circle.dot').first().waitFor();
    await shot(page, 'workflows');
  });

  it('workflow list - the status filter narrows the list and lives in the URL', async () => {
    await page.selectOption('select[name="status"]', 'failed');
    await page.waitForFunction(() => (globalThis as unknown as { location: { hash: string } }).location.hash.includes('status=failed'));
    await page.locator('.workflows-table tbody tr').first().waitFor({ state: 'detached' });
    expect(await page.locator('.empty').isVisible()).toBe(true);
    await page.selectOption('select[name="status"]', '');
  });

  it('workflow page - a timeline with each agent and step duration, and an expandable audit trail', async () => {
    await page.click(`.workflows-table tr[data-key="${id}"] .wf-link`);
    await page.locator('.timeline-box g.step[data-agent="responder"]').waitFor();
    expect(await page.locator('h1').textContent()).toBe('what does the correlation hub keep');
    expect(await page.locator('.title-badges .badge').first().textContent()).toBe('completed');

    const workflow = (await getJson(`${f.url}/v1/workflows/${id}`)).body;
    const bars = await page.locator('.timeline-box g.step').evaluateAll((gs) =>
      gs.map((g) => ({ agent: g.getAttribute('data-agent'), type: g.getAttribute('data-type'), duration: Number(g.getAttribute('data-duration')), label: g.querySelector('text')?.textContent ?? '' })),
    );
    expect(bars.map((b) => [b.agent, b.type, b.duration])).toEqual(workflow.steps.map((s: { agent: string; message_type: string; duration_ms: number }) => [s.agent, s.message_type, Math.round(s.duration_ms)]));
    expect(bars.map((b) => b.agent)).toEqual(['ingress', 'intent', 'planner', 'search', 'responder']);
    for (const b of bars.slice(1)) expect(b.label).toMatch(new RegExp(`^${b.type} · \\d+(\\.\\d+)? m?s`));
    const lanes = await page.locator('.timeline-box text.lane-label').allTextContents();
    expect(lanes).toEqual(['ingress', 'intent', 'planner', 'search', 'responder']);
    expect(await page.locator('.steps-table tbody tr').count()).toBe(workflow.steps.length);

    const history = (await getJson(`${f.url}/v1/workflows/${id}/history`)).body.envelopes as Array<{ message_id: string; message_type: string }>;
    const entries = page.locator('.audit > li');
    await page.locator(`.audit > li[data-message-id="${history[history.length - 1].message_id}"]`).waitFor();
    expect(await entries.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-type')))).toEqual(history.map((e) => e.message_type));
    const plan = page.locator('.audit > li[data-type="execution_plan"]');
    expect(await plan.locator('pre.json').count()).toBe(0); // built only when expanded
    await plan.locator('summary').click();
    const json = JSON.parse((await plan.locator('pre.json').textContent()) ?? '{}');
    expect(json).toEqual(expect.objectContaining({ correlation_id: id, message_type: 'execution_plan', agent: 'planner', target_agent: 'search' }));
    expect(json.payload.profiles.map((p: { name: string }) => p.name)).toEqual(['bm25', 'trigram']);
    expect(await page.locator('#result .results-table tbody tr').count()).toBe(workflow.result.results.length);
    await shot(page, 'workflow');
  });

  it('agents page - hub, intent, planner, search and responder with health and latency, and the profiles', async () => {
    await page.click('nav a[href="#/agents"]');
    await page.locator('.agents-table tr[data-agent="responder"]').waitFor();
    const agents = await page.locator('.agents-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-agent')));
    expect(agents).toEqual(expect.arrayContaining(['hub', 'intent', 'planner', 'search', 'responder']));
    for (const name of ['hub', 'intent', 'planner', 'search', 'responder']) {
      expect(await page.locator(`.agents-table tr[data-agent="${name}"] .health`).textContent()).toBe('up');
    }
    expect(await page.locator('.agents-table tr[data-agent="search"] td').nth(4).textContent()).toMatch(/\d+ ms/); // p50
    await page.locator('#agent-latency g[data-agent="search"]').waitFor();
    expect(await page.locator('.profiles-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-profile')))).toEqual(['bm25', 'trigram']);
    await shot(page, 'agents');
  });

  it('refused input - an invalid workflow id or list filter says what the API refused and is not retried', async () => {
    await page.goto(`${f.url}/#/workflows/bad%20id!`);
    await page.locator('h1:has-text("Not a workflow id")').waitFor();
    expect(await page.locator('main').textContent()).toMatch(/id: id must match/);
    expect(await live(page)).toEqual(expect.objectContaining({ streams: 0 }));
    // A hash that is not valid percent-encoding is refused by the page it names, not thrown on
    // (which left the previous page on screen under the new URL, or a blank page on a first load).
    await page.goto(`${f.url}/#/`);
    await page.locator('#workflows.is-live').waitFor();
    await page.goto(`${f.url}/#/workflows/%E0%A4%A`);
    await page.locator('h1:has-text("Not a workflow id")').waitFor();
    expect(await page.locator('main').textContent()).toMatch(/id: id must match/);
    // A tenant typed in the filters goes to the API as typed, which names it when it refuses it.
    await page.goto(`${f.url}/#/`);
    await page.locator('#workflows.is-live').waitFor();
    await page.locator('.filters input[name=tenant_id]').fill('ACME');
    await page.locator('.filters input[name=tenant_id]').press('Enter');
    await page.locator('#workflows .error-note:not([hidden])').waitFor();
    expect(await page.locator('#workflows .error-note').textContent()).toMatch(/invalid query string \(tenant_id: /);
    expect(await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash)).toBe('#/?tenant_id=ACME');
    await page.goto(`${f.url}/#/?since=yesterday`);
    await page.locator('#workflows .error-note:not([hidden])').waitFor();
    expect(await page.locator('#workflows .error-note').textContent()).toMatch(/invalid query string \(since: /);
    expect(await page.locator('#workflows').textContent()).toMatch(/stopped: fix the filters/);
    // A status the API does not know is refused the same way, not dropped (which listed every workflow).
    await page.goto(`${f.url}/#/?status=bogus`);
    await page.locator('#workflows .error-note:not([hidden])').waitFor();
    expect(await page.locator('#workflows .error-note').textContent()).toMatch(/invalid query string \(status: /);
    expect(await page.locator('select[name=status]').inputValue()).toBe('bogus');
    // The browser reports each refused request on its console; those are the test's own.
    errors.splice(0, errors.length, ...errors.filter((e) => !/status of 400/.test(e)));
    // An agent of its own and a row count the menu does not offer are applied and shown.
    await page.goto(`${f.url}/#/?agent=my-client&limit=7`);
    await page.locator('#workflows.is-live').waitFor();
    expect([await page.locator('select[name=agent]').inputValue(), await page.locator('select[name=limit]').inputValue()]).toEqual(['my-client', '7']);
    await page.goto(`${f.url}/#/`);
    await page.locator('#workflows.is-live').waitFor();
  });

  it('formats - a duration is rounded before its unit is chosen, and a since filter keeps its instant across a DST change', async () => {
    await page.goto(`${f.url}/#/agents`);
    // A string, so the test's compiler leaves the import() to the browser.
    const fmt = await page.evaluate(`import('/js/lib/dom.js').then((dom) => [999.6, 9999.9, 59999, 119600, 125400].map((ms) => dom.fmtMs(ms)))`);
    expect(fmt).toEqual(['1.00 s', '10.0 s', '1 m 0 s', '2 m 0 s', '2 m 5 s']);

    // In Berlin in winter, a July instant is shown in summer time (UTC+2), and changing another
    // filter sends the same instant back (the field was read with today's offset: an hour off).
    const context = await browser.newContext({ timezoneId: 'Europe/Berlin' });
    try {
      // Today is in winter whatever the day the test runs: only `new Date()` and `Date.now()` move.
      await context.addInitScript(`{
        const RealDate = Date;
        const now = RealDate.parse('2026-12-02T12:00:00Z');
        globalThis.Date = class extends RealDate {
          constructor(...args) { super(...(args.length ? args : [now])); }
          static now() { return now; }
        };
      }`);
      const berlin = await context.newPage();
      await berlin.goto(`${f.url}/#/?since=2026-07-01T10:00:00.000Z`);
      await berlin.locator('#workflows.is-live').waitFor();
      expect(await berlin.inputValue('.filters input[name=since]')).toMatch(/^2026-07-01T12:00(:00)?$/);
      await berlin.selectOption('select[name="status"]', 'completed');
      await berlin.waitForFunction(() => (globalThis as unknown as { location: { hash: string } }).location.hash.includes('status=completed'));
      expect(await berlin.evaluate(() => decodeURIComponent((globalThis as unknown as { location: { hash: string } }).location.hash))).toBe('#/?status=completed&since=2026-07-01T10:00:00.000Z');
    } finally {
      await context.close();
    }
  });

  it('workflow page - follows a running workflow over SSE, cancels it, and leaves nothing running behind', async () => {
    await stopApp(f, 'responder'); // the workflow now waits for an answer that never comes
    const running = (await postJson(`${f.url}/v1/queries`, { query: 'how are duplicates dropped', deadline_ms: 30_000 })).body.correlation_id;
    await page.goto(`${f.url}/#/workflows/${running}?tenant=default`);
    await page.locator('.timeline-box g.step[data-agent="search"]').waitFor();
    await page.locator('.timeline-box g.step[data-agent="responder"] .bar-live').waitFor();
    await page.locator('#timeline .live.is-live').waitFor();
    expect(await page.locator('.title-badges .badge').first().textContent()).toBe('running');
    expect(await live(page)).toEqual(expect.objectContaining({ streams: 1 }));
    await shot(page, 'workflow-live');

    // The audit trail's Refresh mid-run reads a snapshot (here, one taken after the query alone): the
    // steps streamed since stay in the trail, and the bar working now is still the responder's.
    await page.route('**/history*', async (route) => {
      const reply = await route.fetch();
      const body = (await reply.json()) as { envelopes: unknown[] };
      await route.fulfill({ response: reply, json: { envelopes: body.envelopes.slice(0, 1) } });
    });
    await page.click('#audit button:has-text("Refresh")');
    await page.locator('.audit > li:nth-child(4)').waitFor();
    await page.waitForTimeout(300);
    expect(await page.locator('.audit > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-type')))).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results']);
    expect(await page.locator('#audit .card-actions').textContent()).toMatch(/4 envelopes \(live\)/);
    expect(await page.locator('.timeline-box g.step .bar-live').evaluateAll((bars) => bars.map((b) => b.closest('g')?.getAttribute('data-agent')))).toEqual(['responder']);
    await page.unroute('**/history*');

    // Leaving the page closes its stream; coming back opens a new one that replays the steps.
    await page.click('nav a[href="#/agents"]');
    await page.locator('.agents-table tr[data-agent="hub"]').waitFor();
    expect(await live(page)).toEqual({ scopes: 2, timers: expect.any(Number), streams: 0 });
    await page.goBack();
    await page.locator('.timeline-box g.step[data-agent="responder"] .bar-live').waitFor();
    expect(await live(page)).toEqual(expect.objectContaining({ scopes: 2, streams: 1 }));

    await page.click('button:has-text("Cancel workflow")');
    await page.click('button:has-text("Confirm cancel")');
    await page.locator('.title-badges .status-cancelled').waitFor();
    await page.locator('.timeline-box g.step[data-agent="responder"] .bar-abandoned').waitFor();
    await page.locator('.audit > li[data-type="orchestration_command"]').waitFor();
    expect(await live(page)).toEqual(expect.objectContaining({ streams: 0 }));

    // A cancelled workflow can be run again: the retry is a new workflow, its page names the first.
    f.chorus.components.push(await startResponder(f.chorus.bus, f.config, f.log));
    await page.click('button:has-text("Retry")');
    await page.waitForURL(/#\/workflows\/rt_[0-9a-f]{32}\?tenant=default$/);
    await page.locator('.title-badges .status-completed').waitFor();
    expect(await page.locator('.meta [data-field="retry_of"]').getAttribute('href')).toBe(`#/workflows/${running}?tenant=default`);
    expect(await page.locator('button:has-text("Retry")').isHidden()).toBe(true);
    await page.click('.meta [data-field="retry_of"]');
    await page.locator('.meta [data-field="retried_as"]').waitFor();
    expect(await page.locator('.title-badges .badge').first().textContent()).toBe('cancelled');
    expect(await page.locator('button:has-text("Retry")').isHidden()).toBe(true);
    // Its audit trail holds the cancel and the retry: two commands, neither a duplicate (their keys differ).
    await page.locator('.audit > li[data-type="orchestration_command"]').nth(1).waitFor();
    expect(await page.locator('.audit > li[data-type="orchestration_command"] .badge', { hasText: 'duplicate' }).count()).toBe(0);

    await page.click('nav a[href="#/"]');
    await page.locator('#workflows.is-live').waitFor();
    // The app's stats sampler and the list page: one scope each, one poll timer each, no stream.
    expect(await live(page)).toEqual({ scopes: 2, timers: expect.any(Number), streams: 0 });
    expect((await live(page)).timers).toBeLessThanOrEqual(2);
  });

  it('header - a hub that does not answer behind an answering API is told apart from an API that does not answer at all', async () => {
    await page.goto(`${f.url}/#/`);
    const conn = page.locator('#conn [data-role=conn-text]');
    await page.locator('#conn.is-ok').waitFor();
    expect(await conn.textContent()).toBe('connected');

    // The ingress answers 503 with its reason: the header says the API is up and what is not answering.
    await stopApp(f, 'hub');
    await page.locator('#conn.is-bad').waitFor({ timeout: 15_000 });
    expect(await conn.textContent()).toMatch(/^API up, but the hub or NATS is not answering: Chorus is not answering right now \((no responders on|no reply on) chorus\.hub\.stats[^)]*\); try again shortly$/);

    // No answer at all (the request fails in the browser): the API is unreachable.
    await page.route('**/v1/stats*', (route) => route.abort());
    await page.locator('#conn [data-role=conn-text]', { hasText: /^API unreachable/ }).waitFor({ timeout: 15_000 });
    expect(await conn.textContent()).toBe('API unreachable (Failed to fetch)');
    await page.unroute('**/v1/stats*');
    await shot(page, 'api-unreachable');

    // The page's polls stop with it; the failed loads the browser reported are this test's own.
    await page.goto('about:blank');
    errors.splice(0, errors.length, ...errors.filter((e) => !/status of 503|net::ERR_FAILED/.test(e)));
  });
});

describe('dashboard (API keys configured)', () => {
  let f: ChorusFixture;

  beforeAll(() => {
    f = keyed;
  });

  it('API key - asks for the key, refuses a wrong one, then shows the tenant’s workflows and remembers the key', async () => {
    const { context, page, errors } = await openPage(browser, { colorScheme: 'dark' });
    try {
      const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is a tenant' }, { authorization: `Bearer ${KEY}` });
      expect(done.body.status).toBe('completed');
      await page.goto(`${f.url}/#/`);
      const dialog = page.locator('#key-dialog[open]');
      await dialog.waitFor();
      expect(await dialog.locator('[data-role="key-message"]').textContent()).toBe('This Chorus needs an API key.');
      await shot(page, 'api-key-prompt');

      await dialog.locator('input[name="api_key"]').fill('not-the-right-key-0000');
      await dialog.locator('button[type="submit"]').click();
      await page.locator('#key-dialog[open] [data-role="key-message"]', { hasText: 'refused' }).waitFor();

      await page.locator('#key-dialog input[name="api_key"]').fill(KEY);
      await page.locator('#key-dialog button[type="submit"]').click();
      await page.locator('#key-dialog').waitFor({ state: 'hidden' });
      const row = page.locator(`.workflows-table tr[data-key="${done.body.correlation_id}"]`);
      await row.waitFor();
      expect(await row.locator('td').nth(3).textContent()).toBe('acme');
      const stored = await page.evaluate(() => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem('chorus.apiKey'));
      expect(stored).toBe(KEY);
      expect(await page.locator('#key-status').textContent()).toContain('••••6789');

      await page.click(`.workflows-table tr[data-key="${done.body.correlation_id}"] .wf-link`);
      await page.locator('.timeline-box g.step[data-agent="responder"]').waitFor();
      await shot(page, 'api-key-workflow');

      // Another tenant's link (a 403 for this key) says so once: no "pending" workflow, no retries.
      let asked = 0;
      page.on('request', (r) => void (r.url().includes(`/v1/workflows/${done.body.correlation_id}`) && asked++));
      await page.goto(`${f.url}/#/workflows/${done.body.correlation_id}?tenant=beta`);
      await page.locator('h1:has-text("Not allowed")').waitFor();
      expect(await page.locator('main').textContent()).toMatch(/cannot be read with this API key: .*not beta/);
      await new Promise((r) => setTimeout(r, 2500));
      expect(asked).toBe(1);
      expect(await live(page)).toEqual(expect.objectContaining({ streams: 0 }));
      // The list filtered on that tenant stops as for a refused filter.
      await page.goto(`${f.url}/#/?tenant_id=beta`);
      await page.locator('#workflows', { hasText: 'stopped: fix the filters' }).waitFor();
      expect(await page.locator('#workflows .error-note').textContent()).toMatch(/not beta/);
      // The browser logs each 401 as a failed resource load; anything else is a bug.
      expect(errors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
