import { createDeadLetter, MAX_DEAD_LETTER_DATA_BYTES, readStoredDeadLetter, type DeadLetterInput } from './dead-letter';

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

describe('readStoredDeadLetter', () => {
  const subject = 'chorus.dlq.default.query';
  it('readStoredDeadLetter - a dead letter is read back as stored, with its sequence in the dead-letter stream', () => {
    const letter = createDeadLetter(input(Buffer.from('{')));
    expect(readStoredDeadLetter(Buffer.from(JSON.stringify(letter)), 9, subject)).toEqual({ ...letter, dlq_seq: 9 });
  });

  it('readStoredDeadLetter - junk stored on a dead-letter subject is listed as unreadable, never thrown (a listing read past it)', () => {
    for (const junk of ['{not json', 'null', '[1]', '5', '"x"', '']) {
      const read = readStoredDeadLetter(Buffer.from(junk), 3, subject);
      expect(read).toMatchObject({ dlq_seq: 3, dlq_subject: subject, unreadable: expect.stringMatching(/^not a dead letter: /) });
      expect(bytesOf(read as { data: string; data_encoding: 'utf8' | 'base64' }).toString()).toBe(junk);
    }
    const binary = Buffer.from([0xff, 0xfe, 0x00]);
    expect(readStoredDeadLetter(binary, 4, subject)).toMatchObject({ unreadable: expect.stringMatching(/^not a dead letter: /), data: binary.toString('base64'), data_encoding: 'base64' });
  });
});
