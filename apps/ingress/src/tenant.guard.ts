import {
  CanActivate,
  ForbiddenException,
  Injectable,
  SetMetadata,
  UnauthorizedException,
  createParamDecorator,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { DEFAULT_TENANT } from '@chorus/envelope';
import { errorBody } from './http.errors';

const PUBLIC = 'chorus:public';

/** Routes anyone may call (health, the dashboard's files, the A2A agent card). */
export const Public = () => SetMetadata(PUBLIC, true);

/** Whether the route handling `ctx` is {@link Public}. */
export function isPublic(reflector: Reflector, ctx: ExecutionContext): boolean {
  return reflector.getAllAndOverride<boolean>(PUBLIC, [ctx.getHandler(), ctx.getClass()]) === true;
}

/** The tenant of the request, as the guard resolved it. */
export interface TenantScope {
  tenant: string;
  /** True when an API key named the tenant; false in development mode (no keys configured). */
  authenticated: boolean;
}

export const TENANT_SCOPE = 'chorusTenant';

/** The resolved tenant of a request: `@Tenant() scope: TenantScope`. */
export const Tenant = createParamDecorator((_: unknown, ctx: ExecutionContext): TenantScope => {
  const req = ctx.switchToHttp().getRequest<Request & { [TENANT_SCOPE]?: TenantScope }>();
  return req[TENANT_SCOPE] ?? { tenant: DEFAULT_TENANT, authenticated: false };
});

/**
 * The API keys a request carries, each different one once: `Authorization: Bearer <key>` and
 * `X-API-Key: <key>`, read from the headers as sent. Node's parsed headers keep only the first
 * `Authorization` of a request and join repeated `X-API-Key` headers with ", ": a second, different
 * key went unseen, and the same key sent twice read as one unknown key.
 */
export function apiKeysOf(req: Pick<Request, 'rawHeaders'>): string[] {
  const keys = new Set<string>();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    const value = req.rawHeaders[i + 1];
    const key = name === 'authorization' && /^Bearer\s+/i.test(value) ? value.replace(/^Bearer\s+/i, '').trim() : name === 'x-api-key' ? value.trim() : '';
    if (key) keys.add(key);
  }
  return [...keys];
}

/** Resolves keys to tenants; comparisons run in constant time. */
export class ApiKeys {
  private readonly entries: Array<[Buffer, string]>;

  constructor(keys: Readonly<Record<string, string>>) {
    this.entries = Object.entries(keys).map(([k, t]) => [Buffer.from(k), t]);
  }

  get enabled(): boolean {
    return this.entries.length > 0;
  }

  tenantOf(key: string): string | undefined {
    const candidate = Buffer.from(key);
    let found: string | undefined;
    for (const [k, tenant] of this.entries) {
      if (k.length === candidate.length && timingSafeEqual(k, candidate)) found = tenant;
    }
    return found;
  }
}

/**
 * Scopes every request to a tenant. With API keys configured, a request needs one (401 without, or
 * with an unknown one) and is scoped to its key's tenant; without keys (development mode) the
 * tenant is the one the request names, `default` otherwise.
 */
@Injectable()
export class TenantGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeys,
    private readonly reflector: Reflector,
  ) {}

  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<Request & { [TENANT_SCOPE]?: TenantScope }>();
    if (isPublic(this.reflector, ctx)) return true;
    req[TENANT_SCOPE] = resolveTenant(this.keys, req);
    return true;
  }
}

/** Shared by the REST guard and the A2A surface. Throws 401 when keys are on and none matches. */
export function resolveTenant(keys: ApiKeys, req: Pick<Request, 'rawHeaders'>): TenantScope {
  if (!keys.enabled) return { tenant: DEFAULT_TENANT, authenticated: false };
  const [key, ...others] = apiKeysOf(req);
  if (others.length > 0) {
    // Which one was meant is anyone's guess; acting for either tenant silently would be wrong.
    throw new UnauthorizedException(errorBody(401, 'two different API keys: send one, in Authorization: Bearer <key> or in X-API-Key: <key>'));
  }
  if (!key) throw new UnauthorizedException(errorBody(401, 'an API key is required: Authorization: Bearer <key> or X-API-Key: <key>'));
  const tenant = keys.tenantOf(key);
  if (!tenant) throw new UnauthorizedException(errorBody(401, 'unknown API key'));
  return { tenant, authenticated: true };
}

/**
 * The tenant a request acts for: its key's tenant (a different `tenant_id` in the request is 403),
 * or in development mode the one it names, `default` otherwise.
 */
export function scopedTenant(scope: TenantScope, requested: string | undefined): string {
  if (!scope.authenticated) return requested ?? scope.tenant;
  if (requested !== undefined && requested !== scope.tenant) {
    throw new ForbiddenException(errorBody(403, `this API key belongs to tenant ${scope.tenant}, not ${requested}`));
  }
  return scope.tenant;
}

/**
 * The tenant to look a workflow up in: the key's (another named one is 403), or in development mode
 * the one named, or any tenant (undefined) when none is.
 */
export function lookupTenant(scope: TenantScope, requested: string | undefined): string | undefined {
  return scope.authenticated ? scopedTenant(scope, requested) : requested;
}
