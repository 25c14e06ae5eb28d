import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { idErrors, InvalidRequestException } from './http.errors';

const QUERY_PARAMS = 'chorus:query-params';

/**
 * The query-string parameters a route takes. Any other is a 400 naming it: in development mode a
 * misspelt `?tennant_id=` would otherwise read across every tenant without a word.
 */
export const QueryParams = (...names: string[]) => SetMetadata(QUERY_PARAMS, names);

/** Enforces {@link QueryParams} on the routes that declare it. */
@Injectable()
export class QueryParamsGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const allowed = this.reflector.get<string[] | undefined>(QUERY_PARAMS, context.getHandler());
    if (!allowed) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const unknown = Object.keys(req.query ?? {}).filter((k) => !allowed.includes(k));
    if (unknown.length === 0) return true;
    const takes = allowed.length > 0 ? `this route takes ${allowed.join(', ')}` : 'this route takes none';
    const errors = unknown.map((k) => ({ field: k, messages: [`unknown query parameter ${k}: ${takes}`] }));
    // One 400 for the whole request: a workflow route's id and tenant_id are named with the rest.
    const ids = typeof req.params?.id === 'string' ? idErrors(req.params.id, req.query.tenant_id) : [];
    throw new InvalidRequestException([...ids, ...errors], ids.length > 0 ? 'invalid request' : 'invalid query string');
  }
}
