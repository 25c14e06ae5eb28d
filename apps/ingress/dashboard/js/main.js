import { createApi, describeConnection } from './lib/api.js';
import { createAuth } from './lib/auth.js';
import { h } from './lib/dom.js';
import { startRouter } from './lib/router.js';
import { live } from './lib/scope.js';
import { createStatsSampler } from './lib/stats-sampler.js';
import { mountAgents } from './views/agents.js';
import { mountOverview } from './views/overview.js';
import { mountWorkflow } from './views/workflow.js';

// The composition root of the dashboard: wire the key prompt, the API, the stats sampler and the pages.
const keyStatus = document.getElementById('key-status');
const showKey = (key) => {
  keyStatus.hidden = !key;
  keyStatus.querySelector('[data-role=key-text]').textContent = key ? `key ••••${key.slice(-4)}` : '';
};
const auth = createAuth(document.getElementById('key-dialog'), { onChange: showKey });
showKey(auth.key);
keyStatus.querySelector('[data-role=forget-key]').addEventListener('click', () => {
  auth.forget();
  location.reload();
});

const api = createApi(auth);
const sampler = createStatsSampler(api);
const ctx = { api, sampler, auth };

const conn = document.getElementById('conn');
const appScope = { onDispose() {} }; // the header lives as long as the page
sampler.subscribe(() => {
  const ok = !sampler.error;
  conn.classList.toggle('is-ok', ok);
  conn.classList.toggle('is-bad', !ok);
  const text = describeConnection(sampler.error);
  const el = conn.querySelector('[data-role=conn-text]');
  if (el.textContent !== text) el.textContent = text; // a live region: announce changes only
}, appScope);

document.querySelector('[data-skip]').addEventListener('click', (event) => {
  event.preventDefault(); // the hash is the router's
  document.getElementById('main').focus();
});

const withCtx = (mount, title) => (outlet, args) => {
  document.title = `${title} · Chorus`;
  mount(outlet, { ...args, ctx });
};
startRouter({
  outlet: document.getElementById('main'),
  routes: [
    { pattern: /^\/$/, nav: 'workflows', mount: withCtx(mountOverview, 'Workflows') },
    { pattern: /^\/workflows\/([^/]+)$/, nav: 'workflows', mount: withCtx(mountWorkflow, 'Workflow') },
    { pattern: /^\/agents$/, nav: 'agents', mount: withCtx(mountAgents, 'Agents') },
  ],
  notFound: (outlet) => outlet.append(h('div', { class: 'page-head' }, h('h1', { tabindex: -1 }, 'Not found')), h('p', {}, 'No such page. ', h('a', { href: '#/' }, 'Back to the workflows.'))),
  onRoute: (route) => {
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.dataset.nav === route?.nav) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  },
});

// What is running (scopes, timers, streams): read by the browser test to catch leaks.
window.__chorusDashboard = { live };
