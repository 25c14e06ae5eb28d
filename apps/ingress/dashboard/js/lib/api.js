import { readEventStream } from './sse.js';

/** A non-2xx answer of the API: `{statusCode, error, message, errors?}`. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    /** `[{field, messages}]` for a 400 about the request. */
    this.fieldErrors = Array.isArray(body?.errors) ? body.errors : [];
  }
}

/**
 * The header's words for the last poll of the API: `connected`; the API itself away (the fetch
 * failed: no answer at all); or the API up but Chorus behind it not answering (its 503 names the
 * hub or NATS); or another HTTP error, with the answer's message.
 */
export function describeConnection(error) {
  if (!error) return 'connected';
  if (!(error instanceof ApiError)) return `API unreachable (${error.message})`;
  if (error.status === 503) return `API up, but the hub or NATS is not answering: ${error.message}`;
  return `API error (HTTP ${error.status}: ${error.message})`;
}

/** `{a: 1, b: '', c: undefined}` → `?a=1`. */
export function toQuery(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The HTTP API, same origin. A 401 asks `auth` for a key and retries. */
export function createApi(auth) {
  async function request(path, { method = 'GET', body, signal, accept = 'application/json' } = {}) {
    for (;;) {
      const headers = { accept };
      const key = auth.key;
      if (key) headers.authorization = `Bearer ${key}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: 'no-store',
      });
      if (res.status !== 401) return res;
      const reason = (await readBody(res))?.message;
      await auth.prompt(reason, signal);
    }
  }

  async function json(path, options) {
    const res = await request(path, options);
    const body = await readBody(res);
    if (!res.ok) throw new ApiError(res.status, body);
    return body;
  }

  return {
    get: (path, options) => json(path, options),
    post: (path, body, options) => json(path, { ...options, method: 'POST', body: body ?? {} }),
    /** Reads an SSE endpoint until it ends; `onEvent({event, data})` per event. */
    async stream(path, { signal, onEvent }) {
      const res = await request(path, { signal, accept: 'text/event-stream' });
      if (!res.ok || !res.body) throw new ApiError(res.status, await readBody(res));
      await readEventStream(res.body, onEvent, signal);
    },
  };
}

async function readBody(res) {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}
