import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ChorusClient, serveNestPattern, type Bus, type Responder } from '@chorus/bus';
import { DEFAULT_TENANT, boundFieldErrors, flattenValidationErrors, isTerminalStatus, isWithinJsonLimits, sanitizeJson, type FieldError } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { SubmitQueryDto } from './submit-query.dto';

/** The pattern a NestJS app sends a query to: `client.send('chorus.query', {query, tenant_id, …})`. */
export const CLIENT_PROXY_PATTERN = 'chorus.query';

/**
 * Lets any NestJS app with a stock `ClientProxy` (`Transport.NATS`) submit a query and receive the
 * finished workflow: `send('chorus.query', {query, tenant_id?, profiles?, top_k?, deadline_ms?,
 * require_all?})`. Invalid data is answered with an error naming every invalid field. Access is
 * NATS's: the app's NATS credentials decide whether it may publish on `chorus.query`.
 */
export function serveClientProxyQueries(bus: Bus, client: ChorusClient, log: Logger, maxDeadlineMs: number, closing?: AbortSignal): Responder {
  return serveNestPattern(bus, CLIENT_PROXY_PATTERN, 'chorus-ingress', log, async (data) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      return { err: { status: 'error', message: 'data must be an object: {query, tenant_id?, …}', errors: [{ field: '$', messages: ['data must be an object'] }] } };
    }
    // As on HTTP: what would break class-transformer (deep nesting, an own `constructor`) is named, not thrown.
    let hazards: FieldError[] = [];
    if (!isWithinJsonLimits(data)) ({ value: data, errors: hazards } = sanitizeJson(data));
    const dto = plainToInstance(SubmitQueryDto, data as object);
    const named = new Set(hazards.map((e) => e.field));
    const errors = [...hazards, ...flattenValidationErrors(validateSync(dto, { whitelist: true, forbidNonWhitelisted: true })).filter((e) => !named.has(e.field))];
    // The deployment's cap stands in for the contract's looser bound: one message, with the real limit.
    if (typeof dto.deadline_ms === 'number' && dto.deadline_ms > maxDeadlineMs) {
      const cap = `deadline_ms must not be greater than ${maxDeadlineMs}`;
      const i = errors.findIndex((e) => e.field === 'deadline_ms');
      if (i < 0) errors.push({ field: 'deadline_ms', messages: [cap] });
      else errors[i] = { field: 'deadline_ms', messages: [...errors[i].messages.filter((m) => !/greater than/.test(m)), cap] };
    }
    if (errors.length > 0) return { err: { status: 'error', message: 'invalid query', errors: boundFieldErrors(errors) } };
    // The ingress closing ends the wait at once: the caller hears where its workflow is, not nothing.
    const { submitted, workflow } = await client.submitAndWait({ ...dto, tenant_id: dto.tenant_id ?? DEFAULT_TENANT }, { signal: closing });
    if (!workflow || !isTerminalStatus(workflow.status)) {
      const message = closing?.aborted
        ? `this ingress is shutting down: workflow ${submitted.correlation_id} goes on; read it with a request to chorus.hub.workflow, or GET /v1/workflows/${submitted.correlation_id}`
        : `workflow ${submitted.correlation_id} did not finish by its deadline`;
      return { err: { status: 'error', message, correlation_id: submitted.correlation_id } };
    }
    return { response: workflow };
  });
}
