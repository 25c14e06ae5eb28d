import { boundedKey } from './jetstream.consumer';

describe('boundedKey', () => {
  it('boundedKey - a Nats-Msg-Id is kept as it is up to 300 characters, a longer one as its hash, the same for the same header', () => {
    expect(boundedKey('wf-1.query.ingress')).toBe('wf-1.query.ingress');
    expect(boundedKey(undefined)).toBeUndefined();
    expect(boundedKey('')).toBe('');
    const long = 'k'.repeat(10_000);
    expect(boundedKey(long)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(boundedKey(long)).toBe(boundedKey('k'.repeat(10_000)));
    expect(boundedKey(long)).not.toBe(boundedKey(`${long}x`));
  });
});
