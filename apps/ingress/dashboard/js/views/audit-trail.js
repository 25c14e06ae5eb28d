import { agentChip, append, fmtTime, h, shortId, syncKeyed } from '../lib/dom.js';

/**
 * The audit trail: every envelope of the workflow in stream order. Before the history is loaded
 * (a running workflow) the entries are the live step events; the full envelopes replace them once
 * `GET /history` answers. An entry's JSON is built only when it is expanded, so a long trail costs
 * one summary line per envelope.
 */
export function createAuditTrail(list) {
  const render = (entries) => {
    const numbered = entries.map((e, i) => ({ ...e, n: i + 1 }));
    syncKeyed(list, numbered, {
      key: (e) => e.message_id,
      signature: (e) => `${e.n}|${e.full ? 'f' : 's'}|${e.duplicate ? 'd' : ''}`,
      create: () => h('li'),
      fill: fillEntry,
    });
  };
  return { render };
}

/** Marks envelopes the hub would drop: a second copy of the same logical message. */
export function markDuplicates(envelopes) {
  const keys = new Set();
  const ids = new Set();
  return envelopes.map((e) => {
    // status_update keys carry a per-step suffix the envelope does not show, so only exact copies
    // count; so do a command's: every cancel has one key (`.cancel`), each retry its own (`.retry-<message_id>`).
    const key = e.message_type === 'status_update' ? null : e.message_type === 'orchestration_command' ? commandKey(e) : `${e.message_type}.${e.agent}`;
    const duplicate = ids.has(e.message_id) || (key !== null && keys.has(key));
    ids.add(e.message_id);
    if (key) keys.add(key);
    return { ...e, duplicate };
  });
}

function commandKey(e) {
  return e.payload?.command === 'cancel' ? `${e.message_type}.${e.agent}.cancel` : null;
}

function fillEntry(li, e) {
  const wasOpen = li.querySelector('details')?.open ?? false;
  li.dataset.messageId = e.message_id;
  li.dataset.type = e.message_type;
  const body = h('div', { class: 'audit-body' });
  const details = h(
    'details',
    { class: `audit-entry ${e.status === 'error' ? 'is-error' : ''}`, open: wasOpen },
    h(
      'summary',
      {},
      h('span', { class: 'audit-n num muted' }, `#${e.n}`),
      h('span', { class: 'num' }, fmtTime(e.timestamp)),
      h('span', { class: 'audit-route' }, agentChip(e.agent), e.target_agent ? [h('span', { class: 'muted', 'aria-label': 'to' }, ' → '), agentChip(e.target_agent)] : null),
      h('code', { class: 'audit-type' }, e.message_type),
      h('span', { class: `badge env-${e.status}` }, e.status),
      e.attempt > 1 ? h('span', { class: 'badge badge-muted' }, `attempt ${e.attempt}`) : null,
      e.duplicate ? h('span', { class: 'badge badge-muted', title: 'a second copy of this logical message; the hub dropped it' }, 'duplicate') : null,
      e.workflow_status || e.payload?.workflow_status ? h('span', { class: 'muted small' }, `workflow ${e.workflow_status ?? e.payload.workflow_status}`) : null,
      e.error_details ? h('span', { class: 'error-type' }, e.error_details.error_type) : null,
      h('span', { class: 'mono muted small audit-id', title: e.message_id }, shortId(e.message_id)),
    ),
    body,
  );
  const fillBody = () => {
    if (body.childElementCount) return;
    const { full, duplicate, n, ...envelope } = e;
    append(body, [
      h(
        'dl',
        { class: 'audit-ids' },
        h('dt', {}, 'message_id'),
        h('dd', { class: 'mono' }, e.message_id),
        h('dt', {}, 'causation_id'),
        h('dd', { class: 'mono' }, e.causation_id ?? '—'),
        e.traceparent ? [h('dt', {}, 'traceparent'), h('dd', { class: 'mono' }, e.traceparent)] : null,
      ),
      full ? null : h('p', { class: 'muted small' }, 'The step as streamed; the full envelope appears when the history loads.'),
      h('pre', { class: 'json', tabindex: 0 }, h('code', {}, JSON.stringify(envelope, null, 2))),
    ]);
  };
  details.addEventListener('toggle', () => details.open && fillBody());
  if (wasOpen) fillBody();
  li.replaceChildren(details);
}
