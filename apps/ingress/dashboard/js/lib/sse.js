/**
 * Reads a server-sent event stream from a fetch() body. EventSource cannot send an Authorization
 * header, and it reconnects when the stream ends, which is wrong here: Chorus ends a workflow's
 * stream on purpose after its one `terminal` event, and a reconnect would replay every step.
 */
export async function readEventStream(body, onEvent, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data = [];
  const onAbort = () => reader.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) onEvent({ event, data: parseData(data.join('\n')) });
          event = 'message';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue; // keep-alive
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

function parseData(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
