import { createScope } from './scope.js';
import { toQuery } from './api.js';

/** `#/workflows/x?tenant=acme` → `{path: '/workflows/x', query: {tenant: 'acme'}}`. */
export function parseHash(hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = q < 0 ? {} : Object.fromEntries(new URLSearchParams(raw.slice(q + 1)));
  return { path: path || '/', query };
}

/** Rewrites the current hash's query (filters) without remounting the page. */
export function replaceQuery(query) {
  const { path } = parseHash(location.hash);
  history.replaceState(history.state, '', `#${path}${toQuery(query)}`);
}

/** A path segment, decoded; one that is not valid percent-encoding (`%E0%A4%A`) is kept as typed, for the page to refuse. */
function decodeParam(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Hash routing. Each route's `mount(outlet, {scope, params, query})` builds its page; the page's
 * scope is disposed when the route changes, which stops its polls, timers and streams.
 */
export function startRouter({ outlet, routes, notFound, onRoute }) {
  let scope = null;
  let first = true;
  const render = () => {
    const { path, query } = parseHash(location.hash);
    let route = null;
    let params = [];
    for (const r of routes) {
      const m = r.pattern.exec(path);
      if (m) {
        route = r;
        params = m.slice(1).map(decodeParam);
        break;
      }
    }
    scope?.dispose();
    scope = createScope();
    outlet.replaceChildren();
    onRoute?.(route);
    (route?.mount ?? notFound)(outlet, { scope, params, query });
    if (!first) outlet.querySelector('h1')?.focus({ preventScroll: true });
    first = false;
    window.scrollTo(0, 0);
  };
  window.addEventListener('hashchange', render);
  render();
}
