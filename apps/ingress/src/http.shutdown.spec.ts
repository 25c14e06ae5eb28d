import { EventEmitter, getEventListeners } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { closeHttpServer, endsWithRequest, refuseWhileClosing } from './http.shutdown';

describe('ingress shutdown', () => {
  it('endsWithRequest - aborts when the request closes or the ingress starts closing, and leaves no listener behind', () => {
    const closing = new AbortController();
    const left = new EventEmitter();
    const one = endsWithRequest(left, closing.signal);
    expect(getEventListeners(closing.signal, 'abort')).toHaveLength(1);
    left.emit('close');
    expect(one.aborted).toBe(true);
    expect(getEventListeners(closing.signal, 'abort')).toHaveLength(0);
    const other = endsWithRequest(new EventEmitter(), closing.signal);
    closing.abort();
    expect(other.aborted).toBe(true);
    expect(endsWithRequest(new EventEmitter(), closing.signal).aborted).toBe(true);
  });

  it('closeHttpServer - ends a long-lived response at once, lets a short one in flight finish, and closes without waiting for more', async () => {
    const closing = new AbortController();
    const app = express();
    app.use(refuseWhileClosing(closing.signal));
    // A stream that ends only when told to, and a request that takes 300 ms.
    app.get('/stream', (req, res) => {
      res.write('open\n');
      endsWithRequest(req, closing.signal).addEventListener('abort', () => res.end('bye\n'));
    });
    app.get('/slow', (_req, res) => void setTimeout(() => res.send('done'), 300));
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const get = (path: string) =>
      new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path }, (res: IncomingMessage) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
        }).on('error', reject).end();
      });
    const stream = get('/stream');
    const slow = get('/slow');
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await closeHttpServer(server, closing, 5_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await stream).toEqual(expect.objectContaining({ status: 200, body: 'open\nbye\n' }));
    expect(await slow).toEqual(expect.objectContaining({ status: 200, body: 'done' }));
    expect(server.listening).toBe(false);
  });

  it('refuseWhileClosing - answers 503 with Retry-After and Connection: close once closing', () => {
    const closing = new AbortController();
    const out = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown, next: 0 };
    const res = {
      setHeader: (name: string, value: string) => void (out.headers[name.toLowerCase()] = value),
      status(code: number) {
        out.status = code;
        return this;
      },
      json: (body: unknown) => void (out.body = body),
    };
    const refuse = refuseWhileClosing(closing.signal);
    refuse({} as never, res as never, () => out.next++);
    closing.abort();
    refuse({} as never, res as never, () => out.next++);
    expect(out).toEqual({
      status: 503,
      headers: { connection: 'close', 'retry-after': '1' },
      body: expect.objectContaining({ statusCode: 503, message: expect.stringMatching(/^this ingress is shutting down; nothing was done/) }),
      next: 1,
    });
  });
});
