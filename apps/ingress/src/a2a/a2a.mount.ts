import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER, AgentCard } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { HttpException } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ChorusClient, discoverServices, type Bus } from '@chorus/bus';
import type { Logger } from '@chorus/observability';
import { NOT_UTF8, refuseDeclaredTooLarge, verifyUtf8 } from '../body.middleware';
import { BUS_UNAVAILABLE, busUnavailable } from '../bus-available.guard';
import { errorBody } from '../http.errors';
import { endsWithRequest, refuseWhileClosing, SHUTTING_DOWN } from '../http.shutdown';
import { ApiKeys, resolveTenant } from '../tenant.guard';
import { A2AUser } from './a2a.user';
import { ChorusExecutor } from './chorus.executor';
import { ChorusRequestHandler } from './chorus.request-handler';
import { ChorusTaskStore } from './chorus.task-store';
import { routeSdkConsoleToLog } from './sdk-console';

export const A2A_PATH = '/a2a';
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
const CARD_TTL_MS = 5_000;

/**
 * The A2A surface (protocol 1.0 as @a2a-js/sdk 1.3.0 implements it, with its 0.3 compatibility
 * layer on, so `message/send`, `message/stream`, `tasks/get` and `tasks/cancel` work too): JSON-RPC
 * at `/a2a`, the agent card at `/.well-known/agent-card.json`, built from the agents and profiles
 * running now. A task is a workflow; API keys scope it to a tenant as on the REST API.
 */
export function mountA2A(
  app: NestExpressApplication,
  deps: { bus: Bus; client: ChorusClient; keys: ApiKeys; log: Logger; closing: AbortSignal; publicUrl: () => string; watchGraceMs: number; maxDeadlineMs: number; bodyLimitBytes: number },
): void {
  routeSdkConsoleToLog(deps.log);
  const cards = new LiveAgentCard(deps.bus, deps.publicUrl, deps.keys.enabled);
  const store = new ChorusTaskStore(deps.client, deps.log);
  const executor = new ChorusExecutor(deps.bus, deps.client, deps.log, deps.watchGraceMs, deps.maxDeadlineMs, deps.closing, store);
  const handler = new ChorusRequestHandler(cards.base(), store, executor, deps.client);
  app.use(
    AGENT_CARD_PATH,
    agentCardHandler({ agentCardProvider: async () => withJsonForm(await cards.current()), cache: { maxAge: 5 }, legacyCompat: { enabled: true } }),
    methodNotAllowed(['GET', 'HEAD'], errorBody(405, 'the agent card is read with GET')),
  );
  app.use(
    A2A_PATH,
    (req: Request & { chorusUser?: A2AUser }, res: Response, next: NextFunction) => {
      try {
        const scope = resolveTenant(deps.keys, req);
        req.chorusUser = new A2AUser(scope.tenant, scope.authenticated, endsWithRequest(res, deps.closing));
        next();
      } catch (e) {
        const status = (e as HttpException).getStatus?.() ?? 401;
        res.status(status).json(rpcError(-32000, `Unauthorized: ${(e as Error).message}`));
      }
    },
    echoFalsyIds,
    // The SDK's own parser, limited as the REST API is (CHORUS_HTTP_BODY_LIMIT; its default was
    // express's 100 KiB): the SDK reads the body inside its router, where nothing of ours runs
    // before its handler, so it is read here first (the SDK's then finds it read).
    refuseDeclaredTooLarge(deps.bodyLimitBytes),
    express.json({ limit: deps.bodyLimitBytes, verify: verifyUtf8 }),
    refuseWhileClosing(deps.closing, (req) => rpcRefusal(req, `Internal error: ${SHUTTING_DOWN}`)),
    refuseWhileBusAway(deps.bus),
    refuseMistypedParams,
    refuseEndedSubscriptions(handler, deps.log),
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: async (req) => (req as Request & { chorusUser: A2AUser }).chorusUser,
      legacyCompat: { enabled: true },
    }),
    methodNotAllowed(['POST'], rpcError(RpcErrorCodes.InvalidRequest, 'Invalid Request: the A2A JSON-RPC endpoint takes POST with a JSON body')),
    a2aErrors(deps.log),
  );
}

/**
 * @a2a-js/sdk 1.3.0 answers an error it catches with `id: req.body?.id || null`, so a request whose
 * id is `0` or `""` (both valid JSON-RPC ids) got its error back with id null, which a client cannot
 * match to its request. Until the SDK echoes them, its JSON answers are given their request's id here.
 */
function echoFalsyIds(req: Request, res: Response, next: NextFunction): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const id = (req.body as { id?: unknown } | undefined)?.id;
    const request = req.body as unknown;
    const single = typeof request === 'object' && request !== null && !Array.isArray(request);
    if (single && (id === 0 || id === '') && isRpcAnswer(body) && body.id === null) return json({ ...body, id });
    return json(body);
  };
  next();
}

/**
 * While NATS is away for longer than a blip, a request is answered at once with a JSON-RPC error
 * (HTTP 503, Retry-After), as the REST routes are (BusAvailableGuard): it would otherwise wait out a
 * publish or a read of the ledger and end as a failed task naming a workflow that never started.
 */
function refuseWhileBusAway(bus: Bus) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!bus.reconnecting) return next();
    void busUnavailable(bus).then((away) => {
      if (!away) return next();
      res.setHeader('Retry-After', '1');
      res.status(503).json(rpcRefusal(req, `Internal error: ${BUS_UNAVAILABLE}`));
    }, next);
  };
}

/**
 * The id params of each method, by the protocol version the SDK serves the request with (its 0.3
 * layer when A2A-Version is absent or 0.3), that the SDK takes to be strings. The push-notification
 * config methods are not here: the SDK refuses them (not supported) before it reads their ids.
 */
const ID_PARAMS = new Map<string, readonly string[]>([
  ['0.3 message/send', ['message.taskId']],
  ['0.3 message/stream', ['message.taskId']],
  ['0.3 tasks/get', ['id']],
  ['0.3 tasks/cancel', ['id']],
  ['0.3 tasks/resubscribe', ['id']],
  [`${A2A_PROTOCOL_VERSION} SendMessage`, ['message.taskId', 'message.task_id']],
  [`${A2A_PROTOCOL_VERSION} SendStreamingMessage`, ['message.taskId', 'message.task_id']],
  [`${A2A_PROTOCOL_VERSION} GetTask`, ['id']],
  [`${A2A_PROTOCOL_VERSION} CancelTask`, ['id']],
  [`${A2A_PROTOCOL_VERSION} SubscribeToTask`, ['id']],
]);

/**
 * The list params of the 0.3 methods that the SDK's 0.3 layer iterates as they are (its 1.0 layer
 * reads a list that is not an array as empty).
 */
const LIST_PARAMS = new Map<string, readonly string[]>([
  ['0.3 message/send', ['message.referenceTaskIds', 'message.extensions', 'configuration.acceptedOutputModes']],
  ['0.3 message/stream', ['message.referenceTaskIds', 'message.extensions', 'configuration.acceptedOutputModes']],
]);

/**
 * @a2a-js/sdk 1.3.0 does not check the type of a task id it is given. Its 0.3 layer passes `id` and
 * `message.taskId` on as they are and calls `.trim()` on them, so a number or an object was a -32603
 * "taskId.trim is not a function"; its 1.0 layer makes a string of them, so `{}` was looked up as
 * the task "[object Object]". Its 0.3 layer also iterates the list params as they are, so
 * `referenceTaskIds: 5` was a -32603 "is not iterable". Until the SDK checks them, such a request
 * (one the SDK would read: a JSON-RPC 2.0 request object with object params; a batch it refuses
 * whole) is refused here with -32602, naming the field, in the error shape of its version.
 */
function refuseMistypedParams(req: Request, res: Response, next: NextFunction): void {
  const body = req.body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | undefined;
  const version = req.header(A2A_VERSION_HEADER) || '0.3';
  const method = isObject(body) && body.jsonrpc === '2.0' && isRpcId(body.id) ? `${version} ${String(body.method)}` : undefined;
  const params = body?.params;
  if (!method || !isObject(params)) {
    next();
    return;
  }
  const checks = [
    ...(ID_PARAMS.get(method) ?? []).map((field) => ({ field, rule: 'a string', ok: (v: unknown) => typeof v === 'string' })),
    ...(LIST_PARAMS.get(method) ?? []).map((field) => ({ field, rule: 'an array', ok: Array.isArray })),
  ];
  for (const { field, rule, ok } of checks) {
    const value = field.split('.').reduce<unknown>((v, key) => (isObject(v) ? v[key] : undefined), params);
    if (value === undefined || value === null || ok(value)) continue;
    const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
    const message = `Invalid params: ${field} must be ${rule}, not ${kind}`;
    const error = version === '0.3' ? { code: RpcErrorCodes.InvalidParams, message } : JsonRpcTransportHandler.mapToJSONRPCError(new RequestMalformedError(message));
    res.status(200).json({ jsonrpc: '2.0', id: body?.id ?? null, error });
    return;
  }
  next();
}

/**
 * A subscription the SDK would refuse (`tasks/resubscribe` or `SubscribeToTask` naming no task, an
 * unknown one or a finished one, which README documents as refused) is refused here, before the
 * SDK's express handler sees it, with the answer it would give: under 0.3 an event stream carrying
 * one error event, under 1.0 a JSON-RPC error. Its handler throws a refusal from inside the stream,
 * and first prints it with console.error, a multi-line stack trace among the JSON log lines that no
 * log pipeline can parse. A task the ledger cannot be read for (the hub down) gets the SDK's
 * answer to that error too, logged here as JSON. (A task that ends between this check and the
 * SDK's own is still refused by the SDK, and printed: a window of one ledger read.)
 */
function refuseEndedSubscriptions(handler: ChorusRequestHandler, log: Logger) {
  return (req: Request & { chorusUser?: A2AUser }, res: Response, next: NextFunction): void => {
    const body = req.body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | undefined;
    const version = req.header(A2A_VERSION_HEADER) || '0.3';
    const legacy = version === '0.3';
    const subscribes = legacy ? body?.method === 'tasks/resubscribe' : version === A2A_PROTOCOL_VERSION && body?.method === 'SubscribeToTask';
    // What else the SDK refuses (not JSON-RPC 2.0, no params object) it answers as JSON, unprinted.
    if (!subscribes || !isObject(body) || body.jsonrpc !== '2.0' || !isRpcId(body.id) || !isObject(body.params)) {
      next();
      return;
    }
    const taskId = typeof body.params.id === 'string' ? body.params.id : '';
    const refused = handler.subscriptionRefusal(taskId, new ServerCallContext({ user: req.chorusUser })).catch((e: unknown) => {
      // The ledger not answering (the hub down): the SDK answered its error (-32603) the same way.
      log.warn({ err: e, correlation_id: taskId }, 'A2A subscription refused: the task could not be read');
      return e instanceof Error ? e : new Error(String(e));
    });
    void refused.then((refusal) => {
      if (!refusal) return next();
      const id = body.id ?? null;
      if (!legacy) {
        res.status(200).json({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(refusal) });
        return;
      }
      // The SDK's SSE headers, set as it sets them (res.set would add a charset to the type).
      for (const [name, value] of Object.entries(SSE_HEADERS)) res.setHeader(name, value);
      res.status(200).end(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error: LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(refusal) })}\n\n`);
    });
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON-RPC request id the SDK accepts: absent, null, a string or an integer. */
function isRpcId(id: unknown): boolean {
  return id === undefined || id === null || typeof id === 'string' || Number.isInteger(id);
}

/**
 * What the SDK's routers pass on for another method (a browser's GET of `/a2a`, a POST of the
 * card): a 405 naming the method that works, in the endpoint's own error shape, instead of the
 * REST API's 404 `Cannot GET`. OPTIONS never gets here: the routers answer it with `Allow`.
 */
function methodNotAllowed(allowed: readonly string[], body: unknown) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (allowed.includes(req.method)) {
      next();
      return;
    }
    res.setHeader('Allow', allowed.join(', '));
    res.status(405).json(body);
  };
}

/** A JSON-RPC internal error answering a request refused before the SDK saw it (Chorus or NATS not able to serve it now). */
function rpcRefusal(req: Request, message: string) {
  const id = (req.body as { id?: unknown } | undefined)?.id;
  return { jsonrpc: '2.0' as const, id: isRpcId(id) ? (id ?? null) : null, error: { code: RpcErrorCodes.InternalError, message } };
}

/** A JSON-RPC error answer to a request whose id is unknown here (refused before it was read). */
function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0' as const, id: null, error: { code, message } };
}

function isRpcAnswer(body: unknown): body is { jsonrpc: '2.0'; id: unknown } {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && (body as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

/** The headers @a2a-js/sdk 1.3.0 opens an event stream with. */
const SSE_HEADERS = Object.freeze({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });

/** JSON-RPC 2.0 and A2A error codes for what goes wrong before a request reaches a method. */
const RpcErrorCodes = Object.freeze({ ParseError: -32700, InvalidRequest: -32600, InvalidParams: -32602, InternalError: -32603, ContentTypeNotSupported: -32005 } as const);

/**
 * What the SDK's router passes on (its JSON parser's refusals other than a syntax error: a body
 * over its limit, an unsupported charset or encoding) answered as a JSON-RPC error, as every answer
 * of `/a2a` is, instead of falling through to the REST API's error shape (whose 413 names the REST
 * body limit, not this parser's). Like the SDK's own refusals, a client's error is an HTTP 200
 * carrying it, and an internal one a 500.
 */
function a2aErrors(log: Logger) {
  return (err: Error & { type?: string; status?: number; limit?: number; charset?: string }, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let error: { code: number; message: string };
    if (err.type === 'entity.too.large') {
      error = { code: RpcErrorCodes.InvalidRequest, message: `Invalid Request: the body is larger than ${err.limit ?? 'the limit of'} bytes` };
    } else if (err.type === 'charset.unsupported' || err.type === 'encoding.unsupported') {
      error = { code: RpcErrorCodes.ContentTypeNotSupported, message: `Unsupported request: ${err.message}; send UTF-8 JSON (Content-Type: application/json)` };
    } else if (err.type === 'entity.parse.failed' || err instanceof SyntaxError) {
      error = { code: RpcErrorCodes.ParseError, message: 'Invalid JSON payload.' };
    } else if (err.type === NOT_UTF8) {
      error = { code: RpcErrorCodes.ParseError, message: 'Invalid JSON payload: the body is not valid UTF-8.' };
    } else if (err.status !== undefined && err.status >= 400 && err.status < 500) {
      error = { code: RpcErrorCodes.InvalidRequest, message: `Invalid Request: ${err.message}` };
    } else {
      log.error({ err }, 'A2A request failed');
      error = { code: RpcErrorCodes.InternalError, message: 'Internal error' };
    }
    res.status(error.code === RpcErrorCodes.InternalError ? 500 : 200).json(rpcError(error.code, error.message));
  };
}

/**
 * Example questions about Chorus itself, and how a profile names the corpus it loaded when that is
 * the project's own documentation (its `$SRV.INFO` metadata: `<root>/{README.md,docs/*.md}`; a
 * CHORUS_CORPUS file is named by its path).
 */
const OWN_DOCS_EXAMPLES: readonly string[] = ['how does chorus drop duplicates', 'what does the correlation hub keep'];
const OWN_DOCS_CORPUS_SUFFIX = '/{README.md,docs/*.md}';

/**
 * The card as the SDK's handler wants it, which serves the 1.0 card with `JSON.stringify` of what it
 * is given: the SDK's in-memory form wrote a oneof as `{"scheme": {"$case": …, "value": …}}`, so a
 * 1.0 client found no auth scheme in it (the 0.3 view, converted from the in-memory form, was right).
 * A `toJSON` gives `JSON.stringify` the protocol's JSON form; the 0.3 converter reads the fields.
 */
function withJsonForm(card: AgentCard): AgentCard {
  return Object.defineProperty({ ...card }, 'toJSON', { value: () => AgentCard.toJSON(card), enumerable: false });
}

/** The agent card, rebuilt from discovery every few seconds so it lists what runs now. */
class LiveAgentCard {
  private cached?: { at: number; card: AgentCard };

  constructor(
    private readonly bus: Bus,
    private readonly publicUrl: () => string,
    private readonly secured: boolean,
  ) {}

  base(profiles: string[] = [], agents: string[] = [], examples: readonly string[] = []): AgentCard {
    const url = `${this.publicUrl()}${A2A_PATH}`;
    const lenses = profiles.length > 0 ? profiles.join(', ') : 'its search profiles';
    return AgentCard.fromJSON({
      name: 'Chorus',
      description:
        'Answers questions from a document corpus through a choreography of agents on NATS JetStream ' +
        `(${agents.length > 0 ? agents.join(' → ') : 'intent → planner → search → responder'}), fusing ${lenses} with Reciprocal Rank Fusion. ` +
        'Each task is a tracked, deduplicated workflow with a deadline.',
      version: '0.1.0',
      supportedInterfaces: [
        { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [
        {
          id: 'search-and-answer',
          name: 'Search and answer',
          description: `Searches the corpus with ${lenses} in parallel, fuses the rankings, and answers with cited sentences and the ranked results.`,
          tags: ['search', 'retrieval', 'rrf', ...profiles],
          examples: [...examples],
          inputModes: ['text/plain'],
          outputModes: ['text/plain', 'application/json'],
        },
      ],
      ...(this.secured
        ? {
            securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: 'A Chorus API key' } } },
            securityRequirements: [{ schemes: { bearer: { list: [] } } }],
          }
        : {}),
    });
  }

  async current(): Promise<AgentCard> {
    if (this.cached && Date.now() - this.cached.at < CARD_TTL_MS) return this.cached.card;
    const services = await discoverServices(this.bus).catch(() => []);
    const order = ['intent', 'planner', 'search', 'responder'];
    const agents = order.filter((a) => services.some((s) => s.kind === 'agent' && s.name === a));
    const running = services.filter((s) => s.kind === 'profile');
    const profiles = running.map((s) => s.name);
    // Questions about Chorus fit only a search of its own docs: with another corpus there are none.
    const ownDocs = running.length > 0 && running.every((s) => s.metadata.corpus?.endsWith(OWN_DOCS_CORPUS_SUFFIX));
    const card = this.base(profiles, agents, ownDocs ? OWN_DOCS_EXAMPLES : []);
    this.cached = { at: Date.now(), card };
    return card;
  }
}
