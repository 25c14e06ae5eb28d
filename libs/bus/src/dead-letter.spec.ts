import { createDeadLetter, MAX_DEAD_LETTER_DATA_BYTES, type DeadLetterInput } from './dead-letter';

const input = (data: Uint8Array, extra: Partial<DeadLetterInput> = {}): DeadLetterInput => ({
  reason: 'invalid_envelope',
  subject: 'chorus.wf.acme.query.abc',
  streamSeq: 7,
  consumer: 'intent',
  data,
  deliveries: 1,
  errors: [{ field: '$', messages: ['bad'] }],
  ...extra,
});
const bytesOf = (letter: { data: string; data_encoding: 'utf8' | 'base64' }) => Buffer.from(letter.data, letter.data_encoding === 'base64' ? 'base64' : 'utf8');
const sizeOf = (letter: unknown) => Buffer.byteLength(JSON.stringify(letter));

describe('createDeadLetter', () => {
  it('createDeadLetter - keeps the body byte for byte: UTF-8 as text (a leading BOM included), anything else as base64', () => {
    const bom = Buffer.from('\ufeff{"a":1}');
    const text = createDeadLetter(input(bom));
    expect({ encoding: text.data_encoding, hex: bytesOf(text).toString('hex') }).toEqual({ encoding: 'utf8', hex: bom.toString('hex') });
    const binary = Buffer.from([0xc3, 0x28, 0xff, 0x00]);
    const b64 = createDeadLetter(input(binary));
    expect({ encoding: b64.data_encoding, hex: bytesOf(b64).toString('hex') }).toEqual({ encoding: 'base64', hex: binary.toString('hex') });
    // Control characters escape to six bytes each in JSON: base64 is the smaller copy.
    expect(createDeadLetter(input(Buffer.alloc(1000, 1))).data_encoding).toBe('base64');
  });

  it('createDeadLetter - always fits in a message: the body is cut to fit, the errors are bounded', () => {
    const huge = Buffer.alloc(900 * 1024, 'x');
    const many = Array.from({ length: 5000 }, (_, i) => ({ field: `payload.results.${i}.${'k'.repeat(500)}`, messages: Array(20).fill('m'.repeat(2000)) }));
    for (const maxBytes of [1024 * 1024, 256 * 1024, 64 * 1024]) {
      const letter = createDeadLetter(input(huge, { errors: many }), new Date(), maxBytes);
      expect(sizeOf(letter)).toBeLessThan(maxBytes);
      expect(letter.errors[letter.errors.length - 1].messages[0]).toMatch(/more invalid fields not listed/);
      expect(huge.subarray(0, bytesOf(letter).length).equals(bytesOf(letter))).toBe(true);
    }
    expect(bytesOf(createDeadLetter(input(huge))).length).toBe(MAX_DEAD_LETTER_DATA_BYTES);
  });
});
