import { card, h, replace, shortId, workflowHref } from '../lib/dom.js';

/** "Ask Chorus": submits `POST /v1/queries` and links the new workflow (or opens it). */
export function mountSubmitForm(parent, { api, scope, onSubmitted }) {
  const [section, body] = card('Ask Chorus', { id: 'submit', cls: 'submit-card' });
  const input = (attrs) => h('input', attrs);
  const form = h(
    'form',
    { class: 'submit-form' },
    h(
      'div',
      { class: 'submit-row' },
      h('label', { class: 'sr-only', for: 'query-input' }, 'Query'),
      input({ id: 'query-input', name: 'query', type: 'search', required: true, maxlength: 4000, placeholder: 'Ask something, e.g. how does the hub drop duplicates', autocomplete: 'off' }),
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Submit'),
    ),
    h(
      'details',
      { class: 'submit-options' },
      h('summary', {}, 'Options'),
      h(
        'div',
        { class: 'options-grid' },
        h('label', { class: 'field' }, h('span', {}, 'Profiles'), input({ name: 'profiles', placeholder: 'planner decides (e.g. bm25, trigram)' })),
        h('label', { class: 'field' }, h('span', {}, 'Top k'), input({ name: 'top_k', type: 'number', min: 1, max: 100, placeholder: '10' })),
        h('label', { class: 'field' }, h('span', {}, 'Deadline (ms)'), input({ name: 'deadline_ms', type: 'number', min: 100, step: 100, placeholder: '10000', title: 'The deployment caps it (CHORUS_MAX_DEADLINE_MS, five minutes by default); a longer one is refused, naming the cap' })),
        h('label', { class: 'field' }, h('span', {}, 'Tenant'), input({ name: 'tenant_id', placeholder: 'default' })),
        h('label', { class: 'check' }, input({ name: 'require_all', type: 'checkbox' }), ' Require every profile'),
        h('label', { class: 'check' }, input({ name: 'follow', type: 'checkbox' }), ' Open its page'),
      ),
    ),
  );
  const result = h('div', { class: 'submit-result', role: 'status', 'aria-live': 'polite' });
  body.append(form, result);
  parent.append(section);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const request = { query: String(data.get('query')) };
    const profiles = String(data.get('profiles') ?? '').split(/[\s,]+/).filter(Boolean);
    if (profiles.length) request.profiles = profiles;
    for (const k of ['top_k', 'deadline_ms']) if (data.get(k)) request[k] = Number(data.get(k));
    if (String(data.get('tenant_id') ?? '').trim()) request.tenant_id = String(data.get('tenant_id')).trim();
    if (data.get('require_all')) request.require_all = true;
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    result.className = 'submit-result';
    result.textContent = 'Submitting…';
    try {
      const reply = await api.post('/v1/queries', request, { signal: scope.signal });
      const href = workflowHref(reply.correlation_id, request.tenant_id);
      result.replaceChildren('Submitted ', h('a', { href, class: 'mono', 'data-role': 'submitted-link' }, shortId(reply.correlation_id)), '.');
      form.elements.query.value = '';
      onSubmitted?.(reply);
      if (data.get('follow')) location.hash = href;
    } catch (err) {
      if (err.name === 'AbortError') return;
      result.className = 'submit-result error-note';
      replace(
        result,
        `Not submitted: ${err.message}`,
        err.fieldErrors?.length ? h('ul', {}, err.fieldErrors.map((f) => h('li', {}, h('code', {}, f.field), `: ${f.messages.join('; ')}`))) : null,
      );
    } finally {
      button.disabled = false;
    }
  });
}
