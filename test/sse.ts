/** A server-sent event as the test reads it. */
export interface SseEvent {
  event: string;
  id?: string;
  /** The reconnection delay the event asks for, if any. */
  retry?: number;
  data: any;
}

/**
 * Reads a whole SSE response (until the server ends it, or `timeoutMs`); `onEvent` sees each event as
 * it arrives; `text` is the body as sent, comments included.
 */
export async function readSse(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 15_000,
  onEvent?: (event: SseEvent) => void,
): Promise<{ status: number; events: SseEvent[]; contentType: string | null; text: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  if (res.status !== 200 || !res.body) {
    clearTimeout(timer);
    return { status: res.status, events, contentType: res.headers.get('content-type'), text: '' };
  }
  const decoder = new TextDecoder();
  let buffer = '';
  let text = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const decoded = decoder.decode(chunk, { stream: true });
      text += decoded;
      buffer += decoded;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n').filter((l) => !l.startsWith(':'));
        // As an EventSource does, a block without data (a comment, a bare `retry:`) dispatches nothing.
        if (!lines.some((l) => l.startsWith('data: '))) continue;
        const field = (name: string) => lines.filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2));
        const retry = field('retry')[0];
        const event: SseEvent = { event: field('event')[0] ?? 'message', id: field('id')[0], data: JSON.parse(field('data').join('\n')), ...(retry ? { retry: Number(retry) } : {}) };
        events.push(event);
        onEvent?.(event);
      }
    }
  } finally {
    clearTimeout(timer);
  }
  return { status: res.status, events, contentType: res.headers.get('content-type'), text };
}
