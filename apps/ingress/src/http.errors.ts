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
import { NoRespondersError, RequestTimeoutError } from '@chorus/bus';
import { flattenValidationErrors, InvalidEnvelopeError, type FieldError } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';

/** Every error body of the HTTP API. */
export interface HttpErrorBody {
  statusCode: number;
  error: string;
  message: string;
  /** Every invalid field, for 400s about the request. */
  errors?: FieldError[];
}

/** A 400 that names every invalid field. */
export class InvalidRequestException extends BadRequestException {
  constructor(readonly fieldErrors: FieldError[], message = 'invalid request body') {
    super({ statusCode: 400, error: 'Bad Request', message, errors: fieldErrors } satisfies HttpErrorBody);
  }
}

/** ValidationPipe's exceptionFactory: class-validator's tree becomes one entry per field. */
export function toInvalidRequest(errors: ValidationError[]): InvalidRequestException {
  return new InvalidRequestException(flattenValidationErrors(errors));
}

export function errorBody(status: number, message: string, errors?: FieldError[]): HttpErrorBody {
  return { statusCode: status, error: reason(status), message, ...(errors ? { errors } : {}) };
}

function reason(status: number): string {
  return (HttpStatus[status] ?? 'Error')
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
}

/**
 * Maps errors to JSON: HTTP exceptions as they are, an invalid envelope as a 400 with its fields,
 * the bus or the hub not answering as 503, anything else as a logged 500.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    let body: HttpErrorBody;
    if (exception instanceof HttpException) {
      const r = exception.getResponse();
      body = typeof r === 'object' && r !== null && 'statusCode' in r ? (r as HttpErrorBody) : errorBody(exception.getStatus(), exception.message);
      if (!('error' in body) || !body.error) body = { ...body, error: reason(body.statusCode) };
    } else if (exception instanceof InvalidEnvelopeError) {
      body = errorBody(400, 'invalid request', [...exception.errors]);
    } else if (exception instanceof NoRespondersError || exception instanceof RequestTimeoutError) {
      body = errorBody(503, `Chorus is not answering right now (${exception.message}); try again shortly`);
    } else {
      this.log.error({ err: exception, method: req.method, url: req.originalUrl }, 'request failed');
      body = errorBody(500, 'internal error');
    }
    res.status(body.statusCode).json(body);
  }
}
