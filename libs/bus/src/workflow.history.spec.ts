import { historyEnvelope } from './workflow.history';

describe('historyEnvelope', () => {
  it('historyEnvelope - an envelope is shown as published', () => {
    expect(historyEnvelope(Buffer.from('{"message_type":"query","payload":{"a":[1]}}'))).toEqual({ message_type: 'query', payload: { a: [1] } });
  });

  it('historyEnvelope - every entry of the trail is an object: a body that is not a JSON object is shown as unparseable, in base64', () => {
    for (const junk of ['{junk', 'null', '[]', '5', '"text"', 'true', '']) {
      expect(historyEnvelope(Buffer.from(junk))).toEqual({ unparseable: Buffer.from(junk).toString('base64') });
    }
    const binary = Buffer.from([0xff, 0xfe, 0x00]);
    expect(historyEnvelope(binary)).toEqual({ unparseable: binary.toString('base64') });
  });
});
