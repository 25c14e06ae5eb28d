import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEnvelopeJsonSchema } from '@chorus/envelope';

/** Writes docs/envelope.schema.json from the envelope's validation rules (`npm run schema`). */
const target = join(process.cwd(), 'docs', 'envelope.schema.json');
writeFileSync(target, `${JSON.stringify(createEnvelopeJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target}`);
