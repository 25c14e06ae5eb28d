import { Controller, Headers, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ChorusClient } from '@chorus/bus';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE, isTerminalStatus, type FieldError, type WorkflowView } from '@chorus/envelope';
import type { Accepted } from './http.bodies';
import { errorBody, InvalidRequestException, repeatedParamErrors, type WaitTimedOutBody } from './http.errors';
import { endsWithRequest } from './http.shutdown';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import { unknownQueryParams } from './query-params.guard';
import { RequestValidationPipe } from './request-validation.pipe';
import { AcceptedSchema, ConflictBodySchema, ErrorBodySchema, WaitTimedOutSchema, WorkflowViewSchema } from './openapi.schemas';
import { ApiBodyErrors } from './openapi';
import { SubmitQueryDto } from './submit-query.dto';
import { Tenant, scopedTenant, type TenantScope } from './tenant.guard';

@ApiTags('queries')
@ApiExtraModels(AcceptedSchema, WorkflowViewSchema)
@Controller('v1/queries')
export class QueriesController {
  private readonly bodyPipe = new RequestValidationPipe();

  constructor(
    private readonly client: ChorusClient,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
  ) {}

  /**
   * Starts a workflow. 202 with its correlation id; with `?wait=true`, 200 with the finished
   * workflow (504 with its current state if it has not finished by its deadline, or at once when
   * the ingress shuts down meanwhile: the workflow goes on). With an
   * `Idempotency-Key`, the same key returns the same workflow: 200, and nothing new starts; so does
   * the same request of a session within its second under the session strategy. A key whose
   * workflow ended and has left the ledger is a 409 (IDEMPOTENCY_KEY_EXPIRED), with or without
   * `?wait`, and nothing is published.
   */
  @Post()
  @HttpCode(202)
  @ApiOperation({ summary: 'Start a workflow' })
  @ApiQuery({ name: 'wait', required: false, type: String, enum: ['true', '1', '', 'false', '0'], description: '`true`, `1` or a bare `?wait`: answer with the finished workflow; `false`, `0` or none: 202 at once; anything else is a 400' })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'The same key returns the same workflow (200) while the ledger keeps it; once it has ended and left the ledger (CHORUS_HUB_RETENTION_MS), a 409 until the stream drops it',
  })
  @ApiResponse({ status: 202, type: AcceptedSchema, description: '`{correlation_id, status_url}`' })
  @ApiResponse({
    status: 200,
    schema: { oneOf: [{ $ref: getSchemaPath(WorkflowViewSchema) }, { $ref: getSchemaPath(AcceptedSchema) }] },
    description: 'With ?wait=true: the finished workflow; with a known Idempotency-Key (or, under the session strategy, the same request of the session within its second): its id' })
  @ApiResponse({ status: 400, type: ErrorBodySchema, description: 'Every invalid field, in `errors`' })
  @ApiResponse({ status: 401, type: ErrorBodySchema, description: 'Missing or unknown API key' })
  @ApiResponse({ status: 403, type: ErrorBodySchema, description: "The body names another tenant than the API key's" })
  @ApiBodyErrors()
  @ApiResponse({
    status: 409,
    type: ConflictBodySchema,
    description: "`error_type` IDEMPOTENCY_KEY_EXPIRED: the Idempotency-Key's workflow ended (`status`) and has left the ledger; nothing was started, a new key starts a new workflow",
  })
  @ApiResponse({ status: 422, type: ErrorBodySchema, description: 'The Idempotency-Key named a workflow started with another request; `errors` says which fields differ' })
  @ApiResponse({ status: 503, type: ErrorBodySchema, description: 'NATS is not answering right now (Retry-After): try again' })
  @ApiResponse({ status: 504, type: WaitTimedOutSchema, description: 'With ?wait=true: not finished by its deadline, its end not confirmed by the hub, or the ingress shutting down meanwhile' })
  @ApiBody({ type: SubmitQueryDto })
  async submit(
    @Query('wait') wait: string | string[] | undefined,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Tenant() scope: TenantScope,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Accepted | WorkflowView | WaitTimedOutBody> {
    const { body, waitForResult } = await this.checkRequest(req.body, wait, idempotencyKey, Object.keys(req.query ?? {}));
    const request = { ...body, tenant_id: scopedTenant(scope, body.tenant_id) };
    const traceparent = req.header('traceparent');
    const onSubmitted = (s: { correlation_id: string }) => {
      res.locals.correlation_id = s.correlation_id;
      req.log?.setBindings?.({ correlation_id: s.correlation_id });
    };
    const statusUrl = (id: string) => `/v1/workflows/${id}`;
    if (!waitForResult) {
      const s = await this.client.submit(request, { traceparent, onSubmitted, idempotencyKey });
      res.setHeader('Location', statusUrl(s.correlation_id));
      // Nothing new started: the key's workflow, or (session strategy) the same request a moment ago.
      if (s.duplicate) res.status(200);
      return { correlation_id: s.correlation_id, status_url: statusUrl(s.correlation_id) };
    }
    // The ingress shutting down ends the wait at once, answered as a wait that ended without an end;
    // so does the client leaving (the response closed before it is sent), which frees its
    // subscription now rather than at the workflow's deadline.
    const signal = endsWithRequest(res, this.options.closing);
    const { submitted, workflow } = await this.client.submitAndWait(request, { traceparent, onSubmitted, idempotencyKey, signal });
    res.setHeader('Location', statusUrl(submitted.correlation_id));
    if (workflow && isTerminalStatus(workflow.status)) {
      res.status(200);
      return workflow;
    }
    res.status(504);
    const why = this.options.closing.aborted
      ? `this ingress is shutting down: workflow ${submitted.correlation_id} goes on; follow it at its status_url`
      : workflow
      ? `workflow ${submitted.correlation_id} did not finish by its deadline`
      : `workflow ${submitted.correlation_id} was accepted, but the hub has not confirmed how it ended (it is not answering); follow it at its status_url`;
    const timedOut: WaitTimedOutBody = {
      ...errorBody(504, why),
      correlation_id: submitted.correlation_id,
      status_url: statusUrl(submitted.correlation_id),
      workflow,
    };
    return timedOut;
  }

  /**
   * The body, the query string and the headers checked together, so one 400 names every invalid
   * field of the request (the body is read here, not by a parameter pipe, which would answer for
   * the body alone before the rest is looked at).
   */
  private async checkRequest(
    raw: unknown,
    wait: string | string[] | undefined,
    idempotencyKey: string | undefined,
    queryKeys: string[],
  ): Promise<{ body: SubmitQueryDto; waitForResult: boolean }> {
    const parts: Array<{ where: string; errors: FieldError[] }> = [];
    let body: SubmitQueryDto | undefined;
    try {
      body = (await this.bodyPipe.transform(raw, { type: 'body', metatype: SubmitQueryDto })) as SubmitQueryDto;
    } catch (e) {
      if (!(e instanceof InvalidRequestException)) throw e;
      parts.push({ where: 'invalid request body', errors: e.fieldErrors });
    }
    const deadline = body?.deadline_ms ?? (raw as { deadline_ms?: unknown } | null)?.deadline_ms;
    if (typeof deadline === 'number' && deadline > this.options.maxDeadlineMs) {
      const cap = `deadline_ms must not be greater than ${this.options.maxDeadlineMs}`;
      // The body's own bound is any deployment's (an hour): this deployment's is the one to meet.
      for (const part of parts) {
        part.errors = part.errors.map((f) => (f.field === 'deadline_ms' ? { ...f, messages: f.messages.map((m) => (/must not be greater than/.test(m) ? cap : m)) } : f));
      }
      if (!parts.some((p) => p.errors.some((f) => f.field === 'deadline_ms'))) {
        const error = { field: 'deadline_ms', messages: [cap] };
        if (parts.length > 0) parts[0].errors = [...parts[0].errors, error];
        else parts.push({ where: 'invalid request body', errors: [error] });
      }
    }
    const waitForResult = Array.isArray(wait) ? undefined : parseWait(wait);
    // A misspelt `wait` must not quietly answer 202 instead of waiting.
    const queryErrors = unknownQueryParams(queryKeys, ['wait'], ' (everything else goes in the JSON body)');
    if (Array.isArray(wait)) queryErrors.unshift(...repeatedParamErrors('wait', wait));
    else if (waitForResult === undefined) queryErrors.unshift({ field: 'wait', messages: ['wait must be true, 1 or empty (wait for the end), or false or 0 (answer at once)'] });
    if (queryErrors.length > 0) parts.push({ where: 'invalid query string', errors: queryErrors });
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      parts.push({
        where: 'invalid headers',
        errors: [{ field: 'Idempotency-Key', messages: [`Idempotency-Key ${IDEMPOTENCY_KEY_RULE}`] }],
      });
    }
    if (parts.length > 0) {
      throw new InvalidRequestException(
        parts.flatMap((p) => p.errors),
        parts.length === 1 ? parts[0].where : 'invalid request',
      );
    }
    return { body: body as SubmitQueryDto, waitForResult: waitForResult as boolean };
  }
}

/** `?wait`: true, false, or undefined when it is neither. */
function parseWait(value: string | undefined): boolean | undefined {
  if (value === undefined || value === 'false' || value === '0') return false;
  // A bare `?wait` asks to wait, as a flag does; answering 202 would ignore it without a word.
  if (value === '' || value === 'true' || value === '1') return true;
  return undefined;
}
