import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import express, { json } from 'express';
import { bodyParserErrors, refuseDeclaredTooLarge, requireJson, verifyUtf8 } from './body.middleware';

const LIMIT = 1024;

/** The ingress's body handling, in its order, in front of a route that echoes what it read. */
function app() {
  const a = express();
  a.use(requireJson, refuseDeclaredTooLarge(LIMIT), json({ limit: LIMIT, verify: verifyUtf8 }), bodyParserErrors(LIMIT));
  a.post('/echo', (req, res) => res.json(req.body));
  return a;
}

/** Sends `head` and a start of the body, never the rest; resolves with what comes back within 3 s. */
function send(port: number, head: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\n\r\n{"query":`));
    let got = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, 3000);
    socket.on('data', (d) => {
      got += d.toString();
      if (/\r\n\r\n[\s\S]*\}$/.test(got)) done();
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

describe('refuseDeclaredTooLarge', () => {
  const server = app().listen(0, '127.0.0.1');
  const port = () => (server.address() as AddressInfo).port;
  beforeAll(() => new Promise((r) => (server.listening ? r(undefined) : server.once('listening', r))));
  afterAll(() => new Promise((r) => server.close(r)));

  it('refuseDeclaredTooLarge - a declared length over the limit is a 413 at once, the connection closed, without waiting for the body', async () => {
    for (const expect100 of [false, true]) {
      const got = await send(port(), `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000${expect100 ? '\r\nExpect: 100-continue' : ''}`);
      // Node answers an Expect: 100-continue itself before any handler runs; the 413 follows at once.
      expect(got).toMatch(/^(HTTP\/1\.1 100 Continue\r\n\r\n)?HTTP\/1\.1 413 /);
      expect(got).toMatch(/\r\nConnection: close\r\n/i);
      expect(got).toContain('"body must be at most 1024 bytes"');
    }
  });

  it('refuseDeclaredTooLarge - a body within the limit is read as before', async () => {
    const res = await fetch(`http://127.0.0.1:${port()}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'x'.repeat(100) }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ query: 'x'.repeat(100) });
  });
});
