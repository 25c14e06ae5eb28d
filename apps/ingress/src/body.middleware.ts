import type { NextFunction, Request, Response } from 'express';
import { errorBody, fieldOf400 } from './http.errors';

/**
 * Requests that carry a body must say it is JSON. A request without one (no Content-Length, or 0,
 * and no Transfer-Encoding: `curl -XPOST …/cancel`) has nothing to check.
 */
export function requireJson(req: Request, res: Response, next: NextFunction): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is('application/json')) {
    res.status(415).json(errorBody(415, 'the request body must be JSON (Content-Type: application/json)'));
    return;
  }
  // JSON between systems is UTF-8 (RFC 8259): a body in another charset is the wrong media type, not bad JSON.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (hasBody && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    res.status(415).json(errorBody(415, `the request body must be UTF-8 JSON, not ${charset} (Content-Type: application/json; charset=utf-8)`));
    return;
  }
  // `utf8` is UTF-8 by another name; the JSON parser knows only `utf-8`, and answered 415 to it.
  if (charset === 'utf8') req.headers['content-type'] = req.headers['content-type']!.replace(/(;\s*charset\s*=\s*"?)utf8/i, '$1utf-8');
  next();
}

/**
 * A body whose declared length (Content-Length, not compressed) is over the limit is refused at once,
 * as the JSON parser's 413 (the error handlers after it answer it), and the connection is closed
 * rather than kept: the parser read and discarded the whole declared body before it answered, so a
 * 50 MB upload was taken in whole, and a client that declared 10 GB and sent less had no answer until
 * the server's request timeout.
 */
export function refuseDeclaredTooLarge(limitBytes: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const declared = Number(req.headers['content-length']);
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (Number.isFinite(declared) && declared > limitBytes && encoding === 'identity') {
      res.setHeader('Connection', 'close');
      next(Object.assign(new Error('request entity too large'), { status: 413, statusCode: 413, expose: true, type: 'entity.too.large', length: declared, limit: limitBytes }));
      return;
    }
    next();
  };
}

/** Turns the JSON body parser's failures into the API's error shape, instead of an HTML page. */
export function bodyParserErrors(limitBytes: number) {
  return (err: Error & { type?: string; status?: number }, _req: Request, res: Response, next: NextFunction): void => {
    if (err.type === 'entity.too.large') {
      res.status(413).json(errorBody(413, `the request body is larger than ${limitBytes} bytes`, [{ field: '$', messages: [`body must be at most ${limitBytes} bytes`] }]));
    } else if (err.type === 'entity.parse.failed' && isJson((err as { body?: unknown }).body)) {
      // Valid JSON the parser refuses in strict mode: `null`, `"text"`, `42`.
      res.status(400).json(errorBody(400, 'invalid request body', [{ field: '$', messages: ['body must be a JSON object'] }]));
    } else if (err.type === NOT_UTF8) {
      res.status(400).json(errorBody(400, 'the request body is not valid UTF-8', [{ field: '$', messages: ['body must be UTF-8 (RFC 8259)'] }]));
    } else if (err.type === 'entity.parse.failed') {
      res.status(400).json(errorBody(400, 'the request body is not valid JSON', [{ field: '$', messages: [err.message] }]));
    } else if (err.status && err.status >= 400 && err.status < 500) {
      // Other client errors of express (a path that is not valid percent-encoding, …); a 400 names its field.
      res.status(err.status).json(errorBody(err.status, err.message, err.status === 400 ? [fieldOf400(err.message)] : undefined));
    } else {
      next(err);
    }
  };
}

/** The `type` of the error {@link verifyUtf8} throws, as body-parser types its own. */
export const NOT_UTF8 = 'entity.verify.utf8';
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON parser's `verify`: a body that is not UTF-8 is refused (400), not read with U+FFFD in place of its bad bytes. */
export function verifyUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  try {
    strictUtf8.decode(body);
  } catch {
    throw Object.assign(new Error('the request body is not valid UTF-8'), { status: 400, type: NOT_UTF8 });
  }
}

function isJson(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A body that parsed but is not an object (`[]`, `"text"`, `42`). */
export function requireObjectBody(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'POST' && req.is('application/json') && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))) {
    res.status(400).json(errorBody(400, 'invalid request body', [{ field: '$', messages: ['body must be a JSON object'] }]));
    return;
  }
  next();
}
