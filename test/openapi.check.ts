import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { getJson } from './chorus.fixture';

/**
 * OpenAPI 3.0 schema objects as JSON Schema for Ajv: every object closed (a field the document does
 * not name is an error), `nullable: true` read as OpenAPI tools read it (null, or the rest of the
 * schema: `{nullable, allOf: [$ref]}` is how @nestjs/swagger writes a nullable object), and
 * references into the document's components resolved against `openapi`.
 */
function asJsonSchema(schema: unknown): unknown {
  const text = JSON.stringify(schema).replace(/"#\/components/g, '"openapi#/components');
  return JSON.parse(text, (_key, value) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
    let v = value as Record<string, unknown>;
    if (v.type === 'object' && v.properties && v.additionalProperties === undefined) v = { ...v, additionalProperties: false };
    if (v.nullable === true) {
      const { nullable: _nullable, ...rest } = v;
      v = { anyOf: [{ type: 'null' }, rest] };
    }
    return v;
  });
}

/**
 * Checks HTTP answers against the response schemas the ingress publishes at /docs/openapi.json.
 * The check gives null when the answer matches, else its status and what does not match.
 * A 405 to a method the path does not take (so the document has no operation for it) is checked
 * against the 405 of every method the path does take: each must describe it.
 */
export async function openApiChecker(baseUrl: string): Promise<(path: string, method: string, answer: { status: number; body: unknown }) => unknown> {
  const doc = (await getJson(`${baseUrl}/docs/openapi.json`)).body;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: { schemas: asJsonSchema(doc.components.schemas) } });
  return (path, method, answer) => {
    const item: Record<string, { responses?: Record<string, any> }> = doc.paths[path] ?? {};
    const described = item[method] ? [[method, item[method]] as const] : answer.status === 405 ? Object.entries(item) : [];
    if (described.length === 0) return { status: answer.status, problem: `no ${method.toUpperCase()} ${path} in the document` };
    for (const [documented, operation] of described) {
      const schema = operation.responses?.[String(answer.status)]?.content?.['application/json']?.schema;
      if (!schema) return { status: answer.status, problem: `no schema for ${documented.toUpperCase()} ${path} ${answer.status}` };
      const validate = ajv.compile(asJsonSchema(schema) as object);
      if (!validate(answer.body)) return { status: answer.status, errors: validate.errors };
    }
    return null;
  };
}
