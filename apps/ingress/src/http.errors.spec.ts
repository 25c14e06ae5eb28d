import type { ArgumentsHost } from '@nestjs/common';
import { RemoteError } from '@chorus/bus';
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

describe('repeatedParamErrors', () => {
  it('repeatedParamErrors - a parameter given as a list is named as given more than once; a single value is no error', () => {
    expect(repeatedParamErrors('wait', ['true', 'false', '1'])).toEqual([{ field: 'wait', messages: ['wait may be given once, not 3 times'] }]);
    expect(repeatedParamErrors('wait', 'true')).toEqual([]);
    expect(repeatedParamErrors('wait', undefined)).toEqual([]);
  });
});
