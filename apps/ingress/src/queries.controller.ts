import { Body, Controller, Headers, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ChorusClient } from '@chorus/bus';
import { isTerminalStatus, type WorkflowView } from '@chorus/envelope';
import { errorBody, InvalidRequestException } from './http.errors';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import { SubmitQueryDto } from './submit-query.dto';
import { Tenant, scopedTenant, type TenantScope } from './tenant.guard';

export interface Accepted {
  correlation_id: string;
  status_url: string;
}

@ApiTags('queries')
@Controller('v1/queries')
export class QueriesController {
  constructor(
    private readonly client: ChorusClient,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
  ) {}

  /**
   * Starts a workflow. 202 with its correlation id; with `?wait=true`, 200 with the finished
   * workflow (504 with its current state if it has not finished by its deadline). With an
   * `Idempotency-Key`, the same key returns the same workflow: 200, and nothing new starts.
   */
  @Post()
  @HttpCode(202)
  @ApiOperation({ summary: 'Start a workflow' })
  @ApiQuery({ name: 'wait', required: false, description: 'true: answer with the finished workflow' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'The same key returns the same workflow (200)' })
  @ApiResponse({ status: 202, description: '`{correlation_id, status_url}`' })
  @ApiResponse({ status: 200, description: 'With ?wait=true: the finished workflow; with a known Idempotency-Key: its id' })
  @ApiResponse({ status: 400, description: 'Every invalid field, in `errors`' })
  @ApiResponse({ status: 401, description: 'Missing or unknown API key' })
  @ApiResponse({ status: 504, description: 'With ?wait=true: not finished by its deadline' })
  async submit(
    @Body() body: SubmitQueryDto,
    @Query('wait') wait: string | undefined,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Tenant() scope: TenantScope,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Accepted | WorkflowView | ReturnType<typeof errorBody>> {
    const waitForResult = parseWait(wait);
    if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,256}$/.test(idempotencyKey)) {
      throw new InvalidRequestException(
        [{ field: 'Idempotency-Key', messages: ['Idempotency-Key must be 1 to 256 printable ASCII characters, no spaces'] }],
        'invalid headers',
      );
    }
    if (body.deadline_ms !== undefined && body.deadline_ms > this.options.maxDeadlineMs) {
      throw new InvalidRequestException([
        { field: 'deadline_ms', messages: [`deadline_ms must not be greater than ${this.options.maxDeadlineMs}`] },
      ]);
    }
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
      if (idempotencyKey && s.duplicate) res.status(200);
      return { correlation_id: s.correlation_id, status_url: statusUrl(s.correlation_id) };
    }
    const { submitted, workflow } = await this.client.submitAndWait(request, { traceparent, onSubmitted, idempotencyKey });
    res.setHeader('Location', statusUrl(submitted.correlation_id));
    if (workflow && isTerminalStatus(workflow.status)) {
      res.status(200);
      return workflow;
    }
    res.status(504);
    const why = workflow
      ? `workflow ${submitted.correlation_id} did not finish by its deadline`
      : `workflow ${submitted.correlation_id} was accepted, but the hub has not confirmed how it ended (it is not answering); follow it at its status_url`;
    return {
      ...errorBody(504, why),
      correlation_id: submitted.correlation_id,
      status_url: statusUrl(submitted.correlation_id),
      workflow,
    } as ReturnType<typeof errorBody>;
  }
}

function parseWait(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new InvalidRequestException([{ field: 'wait', messages: ['wait must be true or false'] }], 'invalid query string');
}
