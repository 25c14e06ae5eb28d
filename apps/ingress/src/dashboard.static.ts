import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';

/** Where the ops dashboard's files live: plain HTML, CSS and ES modules, no build step. */
export function dashboardDir(root: string): string {
  return join(root, 'apps', 'ingress', 'dashboard');
}

/**
 * Serves the ops dashboard at `/`. It is a client of the public HTTP API like any other (it sends
 * the API key the user enters when the API asks for one), so it needs no routes of its own.
 */
export function mountDashboard(app: NestExpressApplication, root: string): boolean {
  const dir = dashboardDir(root);
  if (!existsSync(join(dir, 'index.html'))) return false;
  // Revalidated on every load (ETag), so a browser never mixes modules of two versions. Never shown
  // inside another site's frame: its Cancel and Retry buttons act with the key the browser keeps
  // (clickjacking); `frame-ancestors` for browsers that read CSP, X-Frame-Options for older ones.
  app.use(
    express.static(dir, {
      index: 'index.html',
      maxAge: 0,
      fallthrough: true,
      setHeaders: (res) => {
        res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
        res.setHeader('X-Frame-Options', 'DENY');
      },
    }),
  );
  return true;
}
