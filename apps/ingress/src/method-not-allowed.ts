import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './http.errors';

/**
 * The methods the app's routes answer on a path, read from Express's router when asked (so it sees
 * the routes Nest registers after this is built), HEAD with GET as Express serves it. Paths served
 * by mounted middleware (A2A, the dashboard's files) are not routes: none.
 */
export function routeMethods(app: NestExpressApplication): (path: string) => string[] {
  interface RouteLayer {
    route?: { methods: Record<string, boolean> };
    match(path: string): boolean;
  }
  const express = app.getHttpAdapter().getInstance() as unknown as { router?: { stack: RouteLayer[] } };
  return (path) => {
    const methods = new Set<string>();
    for (const layer of express.router?.stack ?? []) {
      if (!layer.route || !layer.match(path)) continue;
      for (const [method, on] of Object.entries(layer.route.methods)) if (on && method !== '_all') methods.add(method.toUpperCase());
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/**
 * A path the API has a route for, with a method none of them takes: 405 naming the methods it
 * takes (and `Allow`), or for OPTIONS, 204 with `Allow`. A path no route has goes on (to a 404).
 */
export function methodNotAllowed(allowedMethods: (path: string) => string[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const allowed = allowedMethods(req.path);
    if (allowed.length === 0 || allowed.includes(req.method)) return next();
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', [...allowed, 'OPTIONS'].join(', '));
      res.status(204).end();
      return;
    }
    res.setHeader('Allow', allowed.join(', '));
    res.status(405).json(errorBody(405, `${req.method} is not allowed on ${req.path}; it takes ${allowed.join(', ')}`));
  };
}
