import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json, type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { Counter, type Registry } from 'prom-client';
import { ChorusClient, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import { PinoNestLogger, type Logger } from '@chorus/observability';
import { bodyParserErrors, refuseDeclaredTooLarge, requireJson, requireObjectBody, verifyUtf8 } from './body.middleware';
import { serveClientProxyQueries } from './client-proxy.gateway';
import { mountA2A } from './a2a/a2a.mount';
import { dashboardDir, mountDashboard } from './dashboard.static';
import { ApiKeys } from './tenant.guard';
import { HttpErrorFilter } from './http.errors';
import { closeHttpServer, closingController, refuseWhileClosing } from './http.shutdown';
import { IngressModule } from './ingress.module';
import { methodNotAllowed, routeMethods } from './method-not-allowed';
import { mountOpenApi } from './openapi';
import { RequestValidationPipe } from './request-validation.pipe';

export const INGRESS_AGENT = 'ingress';

export interface IngressComponent extends Component {
  /** Where it listens, e.g. http://127.0.0.1:3000. */
  url: string;
}

/** The HTTP front door on the bus. */
export async function startIngress(bus: Bus, config: ChorusConfig, parentLog: Logger): Promise<IngressComponent> {
  const log = parentLog.child({ agent: INGRESS_AGENT });
  const client = new ChorusClient(bus, {
    agent: INGRESS_AGENT,
    correlation: config.correlation,
    defaultDeadlineMs: config.workflow.defaultDeadlineMs,
    defaultTopK: config.workflow.defaultTopK,
    requestTimeoutMs: config.bus.requestTimeoutMs,
    terminalGraceMs: config.workflow.terminalGraceMs,
  });
  // Aborted when the ingress starts closing: long-lived responses end on it (http.shutdown.ts).
  const closing = closingController();
  const app = await NestFactory.create<NestExpressApplication>(
    IngressModule.register(bus, client, { maxDeadlineMs: config.workflow.maxDeadlineMs, watchGraceMs: config.workflow.watchGraceMs, apiKeys: config.http.apiKeys, profiles: config.profiles, closing: closing.signal }),
    { bodyParser: false, logger: new PinoNestLogger(log) },
  );
  // Which server framework answers is nobody's business.
  app.disable('x-powered-by');
  app.use(countResponses(bus.metrics.registry));
  app.use(
    pinoHttp({
      logger: log,
      customProps: (_req, res) => ({ correlation_id: (res as unknown as { locals?: { correlation_id?: string } }).locals?.correlation_id }),
      autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/ready' },
      // A level filter (>= warn) finds the requests Chorus could not serve: 503 and 504 (Chorus or
      // NATS not answering) at warn, a 500 at error; every other answer at info.
      customLogLevel: (_req, res, err) => (err || res.statusCode === 500 ? 'error' : res.statusCode >= 500 ? 'warn' : 'info'),
      // Request lines carry the headers, but never a credential: API keys were in every line.
      serializers: { req: (req: { headers?: Record<string, unknown> }) => ({ ...req, headers: withoutCredentials(req.headers) }) },
    }),
  );
  let url = config.publicUrl ?? '';
  mountA2A(app, { bus, client, keys: new ApiKeys(config.http.apiKeys), log, closing: closing.signal, publicUrl: () => url, watchGraceMs: config.workflow.watchGraceMs, maxDeadlineMs: config.workflow.maxDeadlineMs, bodyLimitBytes: config.http.bodyLimitBytes });
  app.use(refuseWhileClosing(closing.signal));
  if (!mountDashboard(app, config.root)) log.warn({ dir: dashboardDir(config.root) }, 'dashboard files not found; GET / will be 404');
  // Before the body is read: a wrong method is a 405 whatever its body.
  app.use(methodNotAllowed(routeMethods(app)));
  app.use(requireJson);
  // Express's own JSON parser, as useBodyParser mounts it, with a check that the body is UTF-8
  // (useBodyParser keeps `verify` for itself): bytes that are not were read as U+FFFD and accepted.
  app.use(refuseDeclaredTooLarge(config.http.bodyLimitBytes));
  app.use(json({ limit: config.http.bodyLimitBytes, verify: verifyUtf8 }));
  app.use(bodyParserErrors(config.http.bodyLimitBytes));
  app.use(requireObjectBody);
  app.useGlobalPipes(new RequestValidationPipe());
  app.useGlobalFilters(new HttpErrorFilter(log));
  mountOpenApi(app, config.workflow);
  try {
    await app.listen(config.http.port, config.http.host);
  } catch (e) {
    await app.close().catch(() => undefined);
    throw explainListenFailure(e, config.http);
  }
  const address = app.getHttpServer().address() as { address: string; port: number };
  const host = address.address === '::' || address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  const listening = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  url ||= listening;
  const clientProxy = serveClientProxyQueries(bus, client, log, config.workflow.maxDeadlineMs, closing.signal);
  log.info({ url: listening }, 'ingress listening');
  return {
    name: INGRESS_AGENT,
    url: listening,
    close: async () => {
      // No new ClientProxy request is taken; those waiting are answered once `closing` ends their waits.
      const proxyStopped = clientProxy.stop();
      // Nest's app.close() alone waits for every open connection, event streams and waits included.
      await closeHttpServer(app.getHttpServer(), closing);
      await proxyStopped;
      await app.close();
    },
  };
}

/** Node's own words ("listen EADDRINUSE: address already in use …") name neither the setting nor what to do. */
function explainListenFailure(e: unknown, http: { host: string; port: number }): unknown {
  if ((e as NodeJS.ErrnoException)?.code !== 'EADDRINUSE') return e;
  return new Error(`CHORUS_HTTP_PORT ${http.port} is in use by another process (${http.host}:${http.port}): choose another port`, { cause: e });
}

const HTTP_RESPONSES = 'chorus_http_responses_total';

/**
 * Counts every HTTP answer by status code (a bounded set), so rejected requests (4xx) are counted
 * like invalid envelopes are. Registered once per registry: several ingresses may share a process.
 */
function countResponses(registry: Registry) {
  const counter =
    (registry.getSingleMetric(HTTP_RESPONSES) as Counter<'status'> | undefined) ??
    new Counter({ name: HTTP_RESPONSES, help: 'HTTP responses of the ingress, by status code', labelNames: ['status'] as const, registers: [registry] });
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.once('finish', () => counter.inc({ status: String(res.statusCode) }));
    next();
  };
}

/** Headers that carry credentials (API keys, cookies), logged as `[redacted]`. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'cookie', 'set-cookie']);

export function withoutCredentials(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = CREDENTIAL_HEADERS.has(name.toLowerCase()) ? '[redacted]' : value;
  return out;
}
