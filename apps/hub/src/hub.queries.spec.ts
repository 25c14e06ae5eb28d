import { BadRequestError } from '@chorus/envelope';
import { HubQueries } from './hub.queries';

/** The request checks come before any read, so the hub's collaborators are never reached. */
function queries(): HubQueries {
  const unused = new Proxy({}, { get: () => { throw new Error('a refused request must not reach the hub'); } });
  // A history read takes its deadline from the bus's options before it checks the request.
  const bus = new Proxy({ options: { requestTimeoutMs: 5000 } }, { get: (t, k) => { if (k === 'options') return t.options; throw new Error('a refused request must not reach the bus'); } });
  return new HubQueries(bus as never, unused as never, unused as never, unused as never, unused as never, 60_000);
}

async function refusal(read: (q: HubQueries) => Promise<unknown>): Promise<BadRequestError> {
  const e = await read(queries()).then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(BadRequestError);
  return e as BadRequestError;
}

describe('HubQueries - reads of one workflow (chorus.hub.workflow, chorus.hub.history)', () => {
  it.each(['workflow', 'history'] as const)('%s - a misspelt tenant_id is refused, named, not read in whichever tenant holds the workflow', async (kind) => {
    const e = await refusal((q) => q[kind]({ correlation_id: 'wf-1', tennant_id: 'acme' }));
    expect(e.fields).toEqual([{ field: 'tennant_id', messages: ['tennant_id is not a field of this request (fields: correlation_id, tenant_id)'] }]);
  });

  it.each(['workflow', 'history'] as const)('%s - every invalid field is named at once', async (kind) => {
    const e = await refusal((q) => q[kind]({ correlation_id: 'bad.id', tenant_id: 'BAD', extra: 1 }));
    expect(e.fields.map((f) => f.field)).toEqual(['extra', 'correlation_id', 'tenant_id']);
  });

  it('a request that is no object is refused naming it', async () => {
    const e = await refusal((q) => q.workflow([]));
    expect(e.fields.map((f) => f.field)).toEqual(['$', 'correlation_id']);
  });
});

describe('HubQueries - a list (chorus.hub.list)', () => {
  it.each(['', 'Intent', 'a.b'])('an agent filter that is no agent name (%j) is refused, named, not taken for no filter or for none', async (agent) => {
    const e = await refusal((q) => q.list({ agent }));
    expect(e.fields).toEqual([{ field: 'agent', messages: ['agent must be an agent name ([a-z][a-z0-9_-]{0,62})'] }]);
  });
});
