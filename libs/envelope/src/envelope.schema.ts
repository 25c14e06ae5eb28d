import { IS_ISO8601, getMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { Envelope } from './envelope';
import { MESSAGE_TYPES } from './message-type';
import { PAYLOAD_CLASSES } from './payloads';

// class-transformer keeps its @Type() metadata in an internal module that ships no typings.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: NonNullable<Parameters<typeof validationMetadatasToSchemas>[0]>['classTransformerMetadataStorage'];
};

export const ENVELOPE_SCHEMA_ID = 'https://chorus.dev/schemas/envelope/v1.json';

/**
 * The JSON Schema (draft-07) of the envelope, generated from the class-validator rules, with the
 * payload of each message type selected by `message_type`. docs/envelope.schema.json is this
 * document; a test fails when the two differ.
 */
export function createEnvelopeJsonSchema(): Record<string, unknown> {
  const definitions = validationMetadatasToSchemas({
    classValidatorMetadataStorage: getMetadataStorage(),
    classTransformerMetadataStorage: defaultMetadataStorage,
    refPointerPrefix: '#/definitions/',
    // Our dates are strict ISO 8601 date-times, not bare dates.
    additionalConverters: { [IS_ISO8601]: { type: 'string', format: 'date-time' } },
  }) as Record<string, Record<string, unknown>>;
  const envelope = definitions[Envelope.name];
  const nullable = ['causation_id', 'target_agent', 'error_details'];
  const properties = { ...(envelope.properties as Record<string, Record<string, unknown>>) };
  for (const name of nullable) properties[name] = { anyOf: [properties[name], { type: 'null' }] };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: ENVELOPE_SCHEMA_ID,
    title: 'Chorus envelope',
    description:
      'Every message on chorus.wf.<tenant>.<message_type>.<correlation_id> is one envelope. ' +
      'The payload shape depends on message_type.',
    type: 'object',
    properties,
    required: envelope.required,
    allOf: MESSAGE_TYPES.map((type) => ({
      if: { properties: { message_type: { const: type } } },
      then: { properties: { payload: { $ref: `#/definitions/${PAYLOAD_CLASSES[type].name}` } } },
    })),
    definitions: Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => a.localeCompare(b))),
  };
}
