import { IS_ISO8601, getMetadataStorage } from 'class-validator';
import { DATE_TIME_PATTERN, IS_DATE_TIME } from './date-time.validator';
import { MAX_CHARS } from './max-chars.validator';
import { IS_FUSION_WEIGHTS, MAX_FUSION_WEIGHT } from './fusion-weights.validator';
import { MAX_JSON_DEPTH, RESERVED_KEYS } from './json-limits';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { Envelope } from './envelope';
import { MESSAGE_TYPES } from './message-type';
import { PAYLOAD_CLASSES } from './payloads';
import { UUID_V7_PATTERN } from './patterns';

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
    // Our dates are RFC 3339 date-times, not bare dates.
    additionalConverters: {
      [IS_ISO8601]: { type: 'string', format: 'date-time' },
      // A named custom rule is converted by its name (class-validator-jsonschema looks it up). The
      // format alone also takes forms Date.parse cannot read (a leap second, an offset `+01`).
      [IS_DATE_TIME]: { type: 'string', format: 'date-time', pattern: DATE_TIME_PATTERN.source },
      [MAX_CHARS]: (meta: { constraints?: unknown[] }) => ({ maxLength: meta.constraints?.[0] as number }),
      [IS_FUSION_WEIGHTS]: { type: 'object', additionalProperties: { type: 'number', minimum: 0, maximum: MAX_FUSION_WEIGHT } },
    },
  }) as Record<string, Record<string, unknown>>;
  // Ids are UUIDv7 (IsUUID('7')), which the generic `uuid` format does not say.
  const envelopeProps = definitions[Envelope.name].properties as Record<string, Record<string, unknown>>;
  for (const name of ['message_id', 'causation_id']) envelopeProps[name] = { ...envelopeProps[name], pattern: UUID_V7_PATTERN.source };
  // @IsOptional() accepts null as well as absence: every optional property may be null.
  for (const definition of Object.values(definitions)) {
    const required = new Set((definition.required as string[] | undefined) ?? []);
    const props = (definition.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const [name, prop] of Object.entries(props)) if (!required.has(name)) props[name] = { anyOf: [prop, { type: 'null' }] };
  }
  const envelope = definitions[Envelope.name];
  const properties = { ...(envelope.properties as Record<string, Record<string, unknown>>) };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: ENVELOPE_SCHEMA_ID,
    title: 'Chorus envelope',
    description:
      'Every message on chorus.wf.<tenant>.<message_type>.<correlation_id> is one envelope. ' +
      'The payload shape depends on message_type. Beyond this schema, parsers reject an envelope whose ' +
      `arrays and objects nest more than ${MAX_JSON_DEPTH} levels deep, that has an object key ` +
      `${[...RESERVED_KEYS].join(', ')} anywhere, or a number too large for a double (such as 1e999).`,
    type: 'object',
    properties,
    required: envelope.required,
    allOf: [
      ...MESSAGE_TYPES.map((type) => ({
        if: { properties: { message_type: { const: type } } },
        then: { properties: { payload: { $ref: `#/definitions/${PAYLOAD_CLASSES[type].name}` } } },
      })),
      // error_details is required (an object) when status is error (ValidateIf in the class).
      {
        if: { properties: { status: { const: 'error' } }, required: ['status'] },
        then: { required: ['error_details'], properties: { error_details: { $ref: '#/definitions/ErrorDetails' } } },
      },
    ],
    definitions: Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => a.localeCompare(b))),
  };
}
