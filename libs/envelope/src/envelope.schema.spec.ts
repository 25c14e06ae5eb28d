import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { createEnvelopeJsonSchema } from './envelope.schema';

describe('envelope JSON Schema', () => {
  it('envelope JSON Schema - docs/envelope.schema.json matches the validation rules (run `npm run schema` when this fails)', () => {
    const committed = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'envelope.schema.json'), 'utf8'));
    expect(committed).toEqual(createEnvelopeJsonSchema());
  });

  it('envelope JSON Schema - selects the payload definition by message type', () => {
    const schema = createEnvelopeJsonSchema() as { allOf: Array<{ if: unknown; then: unknown }>; definitions: Record<string, unknown> };
    expect(schema.allOf).toContainEqual({
      if: { properties: { message_type: { const: 'execution_plan' } } },
      then: { properties: { payload: { $ref: '#/definitions/ExecutionPlanPayload' } } },
    });
    expect(Object.keys(schema.definitions)).toEqual(expect.arrayContaining(['Envelope', 'QueryPayload', 'ResponsePayload', 'ErrorDetails']));
  });

  it('envelope JSON Schema - is a valid draft-07 schema (the validator compiles it without checking)', () => {
    const ajv = new Ajv({ strict: false, validateFormats: false });
    expect(ajv.validateSchema(createEnvelopeJsonSchema())).toBe(true);
    expect(ajv.errors ?? null).toBeNull();
  });
});
