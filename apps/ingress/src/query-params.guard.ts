import { applyDecorators, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiQuery } from '@nestjs/swagger';
import type { Request } from 'express';
import type { FieldError } from '@chorus/envelope';
import { idErrors, InvalidRequestException } from './http.errors';

const QUERY_PARAMS = 'chorus:query-params';

/** What the OpenAPI document says of each parameter {@link QueryParams} may name. */
const DESCRIPTIONS = {
  tenant_id: "The workflow's tenant. Without API keys (development mode): any tenant, and left out, every tenant (a workflow is found whichever tenant it is in); with a key: only the key's own, and left out, the key's own",
} as const;

/**
 * The query-string parameters a route takes, documented in the OpenAPI document too. Any other is a
 * 400 naming it: in development mode a misspelt `?tennant_id=` would otherwise read across every
 * tenant without a word.
 */
export const QueryParams = (...names: Array<keyof typeof DESCRIPTIONS>) =>
  applyDecorators(SetMetadata(QUERY_PARAMS, names), ...names.map((name) => ApiQuery({ name, required: false, type: String, description: DESCRIPTIONS[name] })));

/** One error for each query-string parameter that is not `allowed`. */
export function unknownQueryParams(names: readonly string[], allowed: readonly string[], hint = ''): FieldError[] {
  const takes = allowed.length > 0 ? `this route takes ${allowed.join(', ')}` : 'this route takes none';
  return names.filter((k) => !allowed.includes(k)).map((k) => ({ field: k, messages: [`unknown query parameter ${k}: ${takes}${hint}`] }));
}

/** Enforces {@link QueryParams} on the routes that declare it. */
@Injectable()
export class QueryParamsGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const allowed = this.reflector.get<string[] | undefined>(QUERY_PARAMS, context.getHandler());
    if (!allowed) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const errors = unknownQueryParams(Object.keys(req.query ?? {}), allowed);
    if (errors.length === 0) return true;
    // One 400 for the whole request: a workflow route's id and tenant_id are named with the rest.
    const ids = typeof req.params?.id === 'string' ? idErrors(req.params.id, req.query.tenant_id) : [];
    throw new InvalidRequestException([...ids, ...errors], ids.length > 0 ? 'invalid request' : 'invalid query string');
  }
}
