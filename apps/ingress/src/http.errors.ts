import {
  ArgumentsHost,
  BadRequestException,
  Catch,
  HttpException,
  HttpStatus,
  type ExceptionFilter,
  type ValidationError,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { EnvelopeTooLargeError, IdempotencyKeyExpiredError, IdempotencyKeyReusedError, isTransient, NoRespondersError, NotRecordedYetError, RemoteError, RequestTimeoutError, StorageFullError } from '@chorus/bus';
import { CORRELATION_ID_PATTERN, EnvelopeErrorCodes, TENANT_ID_PATTERN, boundFieldErrors, flattenValidationErrors, InvalidEnvelopeError, type FieldError, type WorkflowStatus, type WorkflowView } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';

/** Every error body of the HTTP API. */
export interface HttpErrorBody {
  statusCode: number;
  error: string;
  message: string;
  /** Every invalid field, for 400s about the request. */
  errors?: FieldError[];
}

/** A 409 of cancel, retry or an expired Idempotency-Key: the workflow's status, and why it was refused. */
export interface ConflictBody extends HttpErrorBody {
  status: WorkflowStatus;
  error_type?: string;
}

/** The 504 of `?wait=true`: where to follow the workflow, and its state when last read (null: the hub did not answer). */
export interface WaitTimedOutBody extends HttpErrorBody {
  correlation_id: string;
  status_url: string;
  workflow: WorkflowView | null;
}

/**
 * A 400 that names every invalid field (the first 50, then how many more: a body of thousands of
 * unknown keys gets an answer of bounded size).
 */
export class InvalidRequestException extends BadRequestException {
  readonly fieldErrors: FieldError[];
  constructor(fieldErrors: FieldError[], message = 'invalid request body') {
    const bounded = boundFieldErrors(fieldErrors);
    super({ statusCode: 400, error: 'Bad Request', message, errors: bounded } satisfies HttpErrorBody);
    this.fieldErrors = bounded;
  }
}

/** A 400 naming `id` and `tenant_id` when they are not a correlation id and a tenant id. */
export function checkIds(id: string, tenant: unknown): void {
  const errors = idErrors(id, tenant);
  if (errors.length > 0) throw new InvalidRequestException(errors, 'invalid request');
}

/** What {@link checkIds} would name. */
export function idErrors(id: string, tenant: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!CORRELATION_ID_PATTERN.test(id)) errors.push({ field: 'id', messages: ['id must match [A-Za-z0-9_-]{1,128}'] });
  errors.push(...tenantIdErrors(tenant));
  return errors;
}

/**
 * A query parameter given more than once reaches a route as a list: said as such, not as a value
 * of the wrong form ("must match …", "must be one of …"), which would send the client looking for a
 * typo it did not make. Empty when `value` is not a list.
 */
export function repeatedParamErrors(name: string, value: unknown): FieldError[] {
  return Array.isArray(value) ? [{ field: name, messages: [`${name} may be given once, not ${value.length} times`] }] : [];
}

/** What is wrong with a `tenant_id` query parameter, if anything. */
export function tenantIdErrors(tenant: unknown): FieldError[] {
  if (tenant === undefined) return [];
  if (Array.isArray(tenant)) return repeatedParamErrors('tenant_id', tenant);
  if (typeof tenant !== 'string' || !TENANT_ID_PATTERN.test(tenant)) return [{ field: 'tenant_id', messages: ['tenant_id must match [a-z0-9][a-z0-9_-]{0,62}'] }];
  return [];
}

/** ValidationPipe's exceptionFactory: class-validator's tree becomes one entry per field. */
export function toInvalidRequest(errors: ValidationError[]): InvalidRequestException {
  return new InvalidRequestException(flattenValidationErrors(errors));
}

export function errorBody(status: number, message: string, errors?: FieldError[]): HttpErrorBody {
  return { statusCode: status, error: reason(status), message, ...(errors ? { errors } : {}) };
}

/** What a 400 raised outside the API's validation (by the router, by express) names as its invalid field. */
export function fieldOf400(message: string): FieldError {
  const undecodable = /^Failed to decode param '(.*)'$/s.exec(message);
  if (undecodable) return { field: 'path', messages: [`${undecodable[1]} is not valid percent-encoding`] };
  return { field: '$', messages: [message] };
}

function reason(status: number): string {
  return (HttpStatus[status] ?? 'Error')
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
}

/** The hub's error codes the API answers as a client error. */
const HUB_BAD_REQUEST = EnvelopeErrorCodes.BadRequest;
const HUB_NOT_FOUND = 'WORKFLOW_NOT_FOUND';
/** The hub refused a read because it runs as many as it takes at once (apps/hub, HubBusyError). */
const HUB_BUSY = 'HUB_BUSY';

/**
 * Maps errors to JSON: HTTP exceptions as they are, an invalid envelope as a 400 with its fields, a
 * request the hub refused as a 400 (or 404), an idempotency key used for another request as a 422
 * or past its workflow's stay in the ledger as a 409, the bus or the hub not answering as 503,
 * anything else as a logged 500. A response already under way (an event stream) is ended, not
 * answered twice.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    // A response already under way (an event stream) takes no status or header: setting one threw
    // out of this filter, which Nest then called again with that error, and the real one was lost.
    if (res.headersSent) {
      const expected = exception instanceof HttpException || isTransient(exception);
      this.log[expected ? 'warn' : 'error']({ err: exception, method: req.method, url: req.originalUrl }, 'request failed after its response began');
      if (!res.writableEnded) res.end();
      return;
    }
    let body: HttpErrorBody;
    if (exception instanceof HttpException) {
      const r = exception.getResponse();
      body = typeof r === 'object' && r !== null && 'statusCode' in r ? (r as HttpErrorBody) : errorBody(exception.getStatus(), exception.message);
      if (!('error' in body) || !body.error) body = { ...body, error: reason(body.statusCode) };
    } else if (exception instanceof InvalidEnvelopeError) {
      body = errorBody(400, 'invalid request', [...exception.errors]);
    } else if (exception instanceof RemoteError && exception.code === HUB_BAD_REQUEST) {
      // The ingress checks what it forwards; this is the backstop for a rule only the hub knows.
      body = errorBody(400, 'invalid request', exception.fields ? [...exception.fields] : [{ field: '$', messages: [exception.message] }]);
    } else if (exception instanceof RemoteError && exception.code === HUB_NOT_FOUND) {
      body = errorBody(404, exception.message);
    } else if (exception instanceof IdempotencyKeyReusedError) {
      // draft-ietf-httpapi-idempotency-key-header: a key reused with another request payload is a 422.
      body = errorBody(422, exception.message, [{ field: 'Idempotency-Key', messages: [`used before for a request whose ${exception.differing}`] }]);
    } else if (exception instanceof IdempotencyKeyExpiredError) {
      // The key is not another request's (422): it names a workflow that ended and cannot start again.
      const conflict: ConflictBody = { ...errorBody(409, exception.message), status: exception.status, error_type: exception.code };
      body = conflict;
    } else if (exception instanceof RemoteError && exception.code === HUB_BUSY) {
      res.setHeader('Retry-After', '1');
      body = errorBody(503, exception.message);
    } else if (exception instanceof NotRecordedYetError) {
      res.setHeader('Retry-After', '1');
      body = errorBody(503, exception.message);
    } else if (exception instanceof NoRespondersError || exception instanceof RequestTimeoutError) {
      res.setHeader('Retry-After', '1');
      body = errorBody(503, `Chorus is not answering right now (${exception.message}); try again shortly`);
    } else if (exception instanceof EnvelopeTooLargeError) {
      // What the request asked for does not fit in one NATS message (a server with a max_payload
      // smaller than the API's limits): the client's to make smaller, and nothing was done.
      body = errorBody(413, `the request is too large for the message bus: ${exception.message}; nothing was done`, [
        { field: '$', messages: [`the envelope must fit in ${exception.maxPayload ?? 'the server\'s max_payload'} bytes with its headers`] },
      ]);
    } else if (exception instanceof StorageFullError) {
      // Not over in a moment, as an outage is: the operator's to fix (the log says how).
      res.setHeader('Retry-After', '30');
      this.log.error({ err: exception, method: req.method, url: req.originalUrl }, 'request failed: JetStream storage full');
      body = errorBody(503, 'Chorus cannot store anything right now: its message store (JetStream) is full; nothing was done, try again later');
    } else if (isTransient(exception)) {
      res.setHeader('Retry-After', '1');
      // NATS away for longer than the bus retries (a restart, a cluster without a stream leader).
      this.log.warn({ err: exception, method: req.method, url: req.originalUrl }, 'request failed: NATS unavailable');
      body = errorBody(503, 'the message bus is unavailable right now; try again shortly');
    } else {
      this.log.error({ err: exception, method: req.method, url: req.originalUrl }, 'request failed');
      body = errorBody(500, 'internal error');
    }
    res.status(body.statusCode).json(body);
  }
}
