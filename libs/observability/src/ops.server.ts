import { createServer, type Server } from 'node:http';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

export interface Readiness {
  ready: boolean;
  detail: Record<string, unknown>;
}

/**
 * `/health` (the process is up), `/ready` (its dependencies answer) and `/metrics` (Prometheus) for
 * an app that has no HTTP server of its own. The ingress serves the same routes itself.
 */
export async function startOpsServer(
  options: { host: string; port: number },
  metrics: Metrics,
  readiness: () => Promise<Readiness>,
  log: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        // The path alone: a scraper's `/metrics?format=…` (or any query) is still the metrics.
        const path = (req.url ?? '').split('?')[0];
        if (req.method !== 'GET') {
          res.writeHead(405, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 405, error: 'Method Not Allowed', message: 'GET only' }));
        } else if (path === '/health') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
        } else if (path === '/ready') {
          const r = await readiness();
          res.writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: r.ready ? 'ready' : 'not ready', ...r.detail }));
        } else if (path === '/metrics') {
          res.writeHead(200, { 'content-type': metrics.contentType }).end(await metrics.text());
        } else {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 404, error: 'Not Found', message: 'try /health, /ready or /metrics' }));
        }
      } catch (e) {
        log.error({ err: e, url: req.url }, 'ops request failed');
        if (!res.headersSent) res.writeHead(500).end();
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      // Node's own words ("listen EADDRINUSE: address already in use …") name neither the setting nor
      // what to do. Apps start this server only from CHORUS_OPS_HOST and CHORUS_OPS_PORT.
      if (e.code !== 'EADDRINUSE') return reject(e);
      reject(new Error(`CHORUS_OPS_PORT ${options.port} is in use by another process (${options.host}:${options.port}): choose another port`, { cause: e }));
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as { port: number };
  const url = `http://${options.host}:${address.port}`;
  log.info({ url }, 'health, readiness and metrics listening');
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
