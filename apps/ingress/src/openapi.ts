import { applyDecorators } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { ApiResponse, DocumentBuilder, SwaggerModule, type OpenAPIObject, type OperationObject } from '@nestjs/swagger';
import { ErrorBodySchema } from './openapi.schemas';

/** What every `/v1` route (workflows, stats, agents) may answer besides its own. */
export const ApiCommonResponses = () =>
  applyDecorators(
    ApiResponse({ status: 400, type: ErrorBodySchema, description: 'An invalid id, tenant_id, filter or body, or an unknown query parameter: `errors` names each' }),
    ApiResponse({ status: 401, type: ErrorBodySchema, description: 'Missing or unknown API key (when API keys are configured)' }),
    ApiResponse({ status: 503, type: ErrorBodySchema, description: 'NATS or the hub is not answering right now (Retry-After): try again' }),
  );

/** What a route that takes `tenant_id` answers when it names another tenant than the API key's. */
export const ApiTenantResponses = () =>
  ApiResponse({ status: 403, type: ErrorBodySchema, description: "`tenant_id` names another tenant than the API key's (when API keys are configured)" });

/** What a route that reads a JSON body may answer about it besides a 400. */
export const ApiBodyErrors = () =>
  applyDecorators(
    ApiResponse({ status: 413, type: ErrorBodySchema, description: 'The body is larger than the limit' }),
    ApiResponse({ status: 415, type: ErrorBodySchema, description: 'Not a JSON body (Content-Type application/json, UTF-8)' }),
  );

/** What the document says of the query body that depends on the deployment's settings. */
export interface QueryLimits {
  defaultTopK: number;
  defaultDeadlineMs: number;
  maxDeadlineMs: number;
}

/** OpenAPI for the HTTP API: the UI at `/docs`, the document at `/docs/openapi.json`. */
export function mountOpenApi(app: NestExpressApplication, limits: QueryLimits): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Chorus')
      .setDescription(
        'Message-bus choreography for multi-agent workflows. Submit a query, follow its workflow ' +
          '(poll, or stream its events), read its audit trail. With API keys configured, every /v1 ' +
          "request needs one and sees only its tenant's workflows.",
      )
      .setVersion('0.1.0')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'An API key (an opaque string from CHORUS_API_KEYS, not a JWT)' }, 'bearer')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'api-key')
      .addSecurityRequirements('bearer')
      .build(),
  );
  // The decorators hold the contract's bounds; the defaults and the deadline cap are this deployment's.
  const body = document.components?.schemas?.SubmitQueryDto as { properties?: Record<string, Record<string, unknown>> } | undefined;
  if (body?.properties?.top_k) body.properties.top_k.default = limits.defaultTopK;
  if (body?.properties?.deadline_ms) Object.assign(body.properties.deadline_ms, { default: limits.defaultDeadlineMs, maximum: limits.maxDeadlineMs });
  withMethodNotAllowed(document);
  app.use(redirectToDocsPage);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
}

/**
 * Swagger UI's page names its files relative to `/docs` (`./docs/swagger-ui-bundle.js`); served at
 * `/docs/` (when @nestjs/swagger does not see the slash: with a query string) or at
 * `/docs/index.html`, they resolve under `/docs/docs/`, answer 404, and the page stays blank. The page
 * has one address: the others redirect to it. The Location is relative (`../docs`), so the redirect
 * also holds behind a proxy that serves Chorus under a path prefix.
 */
function redirectToDocsPage(req: Request, res: Response, next: NextFunction): void {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.path !== '/docs/' && req.path !== '/docs/index.html')) return next();
  const query = req.originalUrl.indexOf('?');
  res.redirect(301, `../docs${query < 0 ? '' : req.originalUrl.slice(query)}`);
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * Lists the 405 under every operation. The methodNotAllowed middleware answers it for every route
 * of the app, before any guard (so without a key too); in the document, a 405 can only be listed
 * under the methods a path takes, and added here no route can be left without it.
 */
function withMethodNotAllowed(document: OpenAPIObject): void {
  const schema = { $ref: `#/components/schemas/${ErrorBodySchema.name}` };
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item) as Array<[string, OperationObject]>) {
      if (!HTTP_METHODS.has(method)) continue;
      operation.responses['405'] ??= {
        description: 'A method this path does not take; `Allow` names those it takes (OPTIONS is a 204 with `Allow`)',
        headers: { Allow: { description: 'The methods this path takes', schema: { type: 'string' } } },
        content: { 'application/json': { schema } },
      };
    }
  }
}
