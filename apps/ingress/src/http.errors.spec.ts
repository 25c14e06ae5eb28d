import type { ArgumentsHost } from '@nestjs/common';
import { NoRespondersError, RemoteError } from '@chorus/bus';
import { HubSubjects } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { HttpErrorFilter, repeatedParamErrors } from './http.errors';

/** What the filter answers for one error, through a stand-in for Express's response. */
function answer(error: unknown): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const out = { status: 0, headers: {} as Record<string, string>, body: {} as Record<string, unknown> };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => void (out.headers[name.toLowerCase()] = value),
    status(code: number) {
      out.status = code;
      return this;
    },
    json: (body: Record<string, unknown>) => void (out.body = body),
  };
  const req = { method: 'GET', originalUrl: '/v1/workflows/x/history' };
  const host = { switchToHttp: () => ({ getResponse: () => res, getRequest: () => req }) } as unknown as ArgumentsHost;
  new HttpErrorFilter(createRootLogger({ name: 'test', level: 'silent' })).catch(error, host);
  return out;
}

describe('HttpErrorFilter', () => {
  it('HttpErrorFilter - the hub refusing a read as busy is a 503 with Retry-After and the hub\'s own words, not "the message bus is unavailable"', () => {
    const busy = new RemoteError(HubSubjects.History, 'HUB_BUSY', 'the hub is busy: 8 history reads are under way and 64 more wait; try again shortly', true);
    expect(answer(busy)).toEqual({
      status: 503,
      headers: { 'retry-after': '1' },
      body: expect.objectContaining({ statusCode: 503, message: 'the hub is busy: 8 history reads are under way and 64 more wait; try again shortly' }),
    });
  });
});

describe('HttpErrorFilter, after the response began', () => {
  // Found by the failure-under-load exploration: an event stream whose hub read failed while NATS
  // restarted. The filter set Retry-After on a response already streaming, which threw
  // ERR_HTTP_HEADERS_SENT out of the filter: Nest called it again with that error, logged at error
  // level as 'request failed' (a 500), and the stream's real cause was logged nowhere.
  it('HttpErrorFilter - an error after the response began ends it, logging the error itself, and throws nothing', () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createRootLogger({ name: 'test', level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } as never });
    let ended = false;
    const res = {
      headersSent: true,
      writableEnded: false,
      setHeader: () => {
        throw Object.assign(new Error('Cannot set headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
      },
      status: () => {
        throw new Error('status after the response began');
      },
      end: () => void (ended = true),
    };
    const req = { method: 'GET', originalUrl: '/v1/workflows/x/events' };
    const host = { switchToHttp: () => ({ getResponse: () => res, getRequest: () => req }) } as unknown as ArgumentsHost;
    expect(() => new HttpErrorFilter(log).catch(new NoRespondersError('chorus.hub.workflow'), host)).not.toThrow();
    expect(ended).toBe(true);
    expect(lines.map((l) => [l.level, l.msg, (l.err as { message?: string } | undefined)?.message])).toEqual([[40, 'request failed after its response began', 'no responders on chorus.hub.workflow']]);
  });
});

describe('repeatedParamErrors', () => {
  it('repeatedParamErrors - a parameter given as a list is named as given more than once; a single value is no error', () => {
    expect(repeatedParamErrors('wait', ['true', 'false', '1'])).toEqual([{ field: 'wait', messages: ['wait may be given once, not 3 times'] }]);
    expect(repeatedParamErrors('wait', 'true')).toEqual([]);
    expect(repeatedParamErrors('wait', undefined)).toEqual([]);
  });
});
