/**
 * A tiny hyperscript: `h('a', {href, class: 'x', onclick}, 'text', child)`. Strings become text
 * nodes, so nothing the API returns is ever parsed as HTML.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) setAttrs(el, attrs);
  append(el, children);
  return el;
}

export function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

/** Replaces `el`'s children, skipping null/false ones (native replaceChildren would print "null"). */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/**
 * Keeps `parent`'s children in the order of `items`, one element per key, and calls `fill(el, item)`
 * only for new elements and for those whose signature changed. A poll that changes nothing touches
 * no DOM, which keeps the list cheap when it refreshes every two seconds.
 */
export function syncKeyed(parent, items, { key, signature, create, fill, onNew }) {
  const existing = new Map();
  for (const el of parent.children) existing.set(el.dataset.key, el);
  let ref = parent.firstElementChild;
  for (const item of items) {
    const k = key(item);
    const sig = signature(item);
    let el = existing.get(k);
    if (el) {
      existing.delete(k);
      if (el.dataset.sig !== sig) fill(el, item);
    } else {
      el = create(item);
      el.dataset.key = k;
      fill(el, item);
      onNew?.(el);
    }
    el.dataset.sig = sig;
    if (el !== ref) parent.insertBefore(el, ref);
    ref = el.nextElementSibling;
  }
  for (const el of existing.values()) el.remove();
}

const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled']);
export const isTerminal = (status) => TERMINAL.has(status);

export function statusBadge(status) {
  return h('span', { class: `badge status-${status}` }, status.replace('_', ' '));
}

/** A stable hue per agent, shared by the list chips and the timeline lanes. */
const AGENT_HUES = { ingress: 215, intent: 262, planner: 35, search: 172, responder: 330, hub: 95, cli: 195 };
export function agentHue(name) {
  if (name in AGENT_HUES) return AGENT_HUES[name];
  let x = 0;
  for (const ch of name) x = (x * 31 + ch.charCodeAt(0)) % 360;
  return x;
}

export function agentChip(name) {
  return h('span', { class: 'chip agent-chip', style: `--hue:${agentHue(name)}` }, name);
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms === 0) return '0 ms';
  if (ms < 1) return `${ms.toFixed(1)} ms`;
  // Each unit is chosen after rounding, so 59,999 ms is 1 m 0 s (not 60.0 s) and 119,600 ms 2 m 0 s (not 1 m 60 s).
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  if (Math.round(ms / 10) < 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (Math.round(ms / 100) < 600) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} m ${seconds % 60} s`;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** Local wall-clock time with milliseconds: steps are milliseconds apart. */
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function fmtDateTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  const today = new Date().toDateString() === d.toDateString();
  return today ? fmtTime(iso) : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${fmtTime(iso)}`;
}

export function fmtPercent(rate) {
  if (rate === null || rate === undefined) return '—';
  return `${(rate * 100).toFixed(rate > 0 && rate < 0.01 ? 2 : 1)}%`;
}

export function fmtCount(n) {
  if (n === null || n === undefined) return '—';
  return n >= 10_000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k` : String(n);
}

export const shortId = (id) => (id && id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id ?? '');

export function durationOf(w) {
  return w.finished_at ? Date.parse(w.finished_at) - Date.parse(w.started_at) : null;
}

export function workflowHref(id, tenant) {
  return `#/workflows/${encodeURIComponent(id)}${tenant ? `?tenant=${encodeURIComponent(tenant)}` : ''}`;
}

/** A card with a heading; returns [section, body]. */
export function card(title, { id, actions, cls } = {}) {
  const body = h('div', { class: 'card-body' });
  const headingId = id ? `${id}-title` : undefined;
  const section = h(
    'section',
    { class: `card ${cls ?? ''}`, id, 'aria-labelledby': headingId },
    h('header', { class: 'card-head' }, h('h2', { id: headingId }, title), actions ? h('div', { class: 'card-actions' }, actions) : null),
    body,
  );
  return [section, body];
}
