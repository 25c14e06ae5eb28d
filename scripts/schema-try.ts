import 'reflect-metadata';
import { createEnvelopeJsonSchema, parseEnvelope, createEnvelope } from '@chorus/envelope';
const s = createEnvelopeJsonSchema();
console.log(JSON.stringify(s, null, 1).slice(0, 3000));
const e = createEnvelope({ messageType: 'query', correlationId: 'abc', tenantId: 'default', agent: 'ingress', payload: { query: 'hi', top_k: 10, require_all: false } as any, deadline: new Date(Date.now()+10000) });
console.log(JSON.stringify(e), JSON.stringify(e).length);
console.log(parseEnvelope(JSON.stringify(e), { subject: 'chorus.wf.default.query.abc' }));
console.log(JSON.stringify((parseEnvelope('{"message_type":"query","payload":{"query":""},"status":"error"}') as any).error.errors, null, 0));
