import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './env.parser';
import { parseChorusConfig } from './chorus.config';

describe('parseChorusConfig', () => {
  it('parseChorusConfig - documented defaults', () => {
    const c = parseChorusConfig({}, '/srv/chorus');
    expect(c.natsUrl).toBeUndefined();
    expect(c.bus.servers).toEqual(['nats://127.0.0.1:4222']);
    expect(c.http).toEqual({ host: '127.0.0.1', port: 3000, bodyLimitBytes: 65536, apiKeys: {} });
    expect(c.workflow.defaultDeadlineMs).toBe(10_000);
    expect(c.profiles).toEqual(['bm25', 'trigram']);
    expect(c.search.rrfK).toBe(60);
    expect(c.dataDir).toBe('/srv/chorus/.chorus');
    expect(c.corpusPath).toBeUndefined();
    expect(Object.isFrozen(c.bus)).toBe(true);
  });

  it('parseChorusConfig - a duplicate window longer than a stream keeps its messages is refused, naming both settings', () => {
    // JetStream itself says only "duplicates window can not be larger then max age", naming neither.
    expect(() => parseChorusConfig({ CHORUS_DUPLICATE_WINDOW_MS: '86400000', CHORUS_STREAM_RETENTION_MS: '60000' }, '/')).toThrow(
      'CHORUS_DUPLICATE_WINDOW_MS (86400000) must not exceed CHORUS_STREAM_RETENTION_MS (60000)',
    );
    expect(() => parseChorusConfig({ CHORUS_DEAD_LETTER_RETENTION_MS: '60000' }, '/')).toThrow('CHORUS_DUPLICATE_WINDOW_MS (120000) must not exceed CHORUS_DEAD_LETTER_RETENTION_MS (60000)');
    expect(() => parseChorusConfig({ CHORUS_HUB_TOTALS_RETENTION_MS: '60000' }, '/')).toThrow('CHORUS_DUPLICATE_WINDOW_MS (120000) must not exceed CHORUS_HUB_TOTALS_RETENTION_MS (60000)');
    expect(() => parseChorusConfig({ CHORUS_DUPLICATE_WINDOW_MS: '60000', CHORUS_STREAM_RETENTION_MS: '60000', CHORUS_DEAD_LETTER_RETENTION_MS: '60000' }, '/')).not.toThrow();
  });

  it('parseChorusConfig - reads the environment', () => {
    const c = parseChorusConfig(
      { NATS_URL: 'nats://a:4222, nats://b:4222', CHORUS_HTTP_PORT: '8080', CHORUS_PROFILES: 'bm25', CHORUS_CORPUS: 'data/c.jsonl', CHORUS_CORRELATION_STRATEGY: 'session' },
      '/srv/chorus',
    );
    expect(c.bus.servers).toEqual(['nats://a:4222', 'nats://b:4222']);
    expect(c.http.port).toBe(8080);
    expect(c.profiles).toEqual(['bm25']);
    expect(c.corpusPath).toBe('/srv/chorus/data/c.jsonl');
    expect(c.correlation.strategy).toBe('session');
  });

  it('parseChorusConfig - API keys map to tenants; short keys and bad tenants are refused', () => {
    const c = parseChorusConfig({ CHORUS_API_KEYS: 'k-0123456789abcdef:acme, k-abcdef0123456789:globex' }, '/');
    expect(c.http.apiKeys).toEqual({ 'k-0123456789abcdef': 'acme', 'k-abcdef0123456789': 'globex' });
    expect(() => parseChorusConfig({ CHORUS_API_KEYS: 'short:acme' }, '/')).toThrow(/at least 16 characters/);
    expect(() => parseChorusConfig({ CHORUS_API_KEYS: 'k-0123456789abcdef:Not A Tenant' }, '/')).toThrow(/not a valid tenant id/);
  });

  it('parseChorusConfig - NATS_URL names servers nats.js can dial; a bad port or an empty entry is a bad setting', () => {
    // nats.js ignores the scheme, so any is fine; it reads host and port.
    for (const ok of ['nats://127.0.0.1:4222', '127.0.0.1:4222', 'tls://nats.example:4443', 'nats://a:4222, nats://b:4222', 'nats://user:pass@127.0.0.1:4222', '[::1]:4222', '::1', 'localhost']) {
      expect(() => parseChorusConfig({ NATS_URL: ok }, '/')).not.toThrow();
    }
    for (const bad of ['nats://127.0.0.1:99999', 'nats://a:4222,', 'nats://:4222', 'nats://a b:4222']) {
      expect(() => parseChorusConfig({ NATS_URL: bad }, '/')).toThrow(/NATS_URL: .* is not a NATS server address/);
    }
  });

  it('parseChorusConfig - one API key for two tenants is refused (naming the tenants, not the key); the same pair twice is fine', () => {
    expect(() => parseChorusConfig({ CHORUS_API_KEYS: 'k-0123456789abcdef:acme,k-0123456789abcdef:beta' }, '/')).toThrow(
      /one API key is given for two tenants, acme and beta/,
    );
    expect(() => parseChorusConfig({ CHORUS_API_KEYS: 'k-0123456789abcdef:acme,k-0123456789abcdef:beta' }, '/')).not.toThrow(/k-01/);
    expect(parseChorusConfig({ CHORUS_API_KEYS: 'k-0123456789abcdef:acme,k-0123456789abcdef:acme' }, '/').http.apiKeys).toEqual({ 'k-0123456789abcdef': 'acme' });
  });

  it('parseChorusConfig - CHORUS_API_KEYS_FILE must hold an object of key → tenant string; anything else is named as such', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chorus-keys-'));
    try {
      const withFile = (content: string) => {
        writeFileSync(join(dir, 'keys.json'), content);
        return () => parseChorusConfig({ CHORUS_API_KEYS_FILE: 'keys.json' }, dir);
      };
      expect(withFile('{"k-0123456789abcdef": "acme"}')().http.apiKeys).toEqual({ 'k-0123456789abcdef': 'acme' });
      expect(withFile('[1, 2]')).toThrow(/CHORUS_API_KEYS_FILE must hold a JSON object of key → tenant \(\{"key": "tenant"\}\), not an array/);
      expect(withFile('null')).toThrow(/not null/);
      expect(withFile('"k"')).toThrow(/not a string/);
      expect(withFile('{"k-0123456789abcdef": 5}')).toThrow(/a key's tenant must be a string \(a tenant id\), not 5/);
      expect(withFile('{nope')).toThrow(/could not be read as a JSON object of key → tenant/);
      // An empty file must not quietly turn authentication off.
      expect(withFile('{}')).toThrow(/CHORUS_API_KEYS_FILE holds no key/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parseChorusConfig - names every bad variable in one error', () => {
    let error: unknown;
    try {
      parseChorusConfig({ CHORUS_HTTP_PORT: 'eighty', CHORUS_RRF_K: '-1', CHORUS_PROFILES: 'bm25,BAD NAME', CHORUS_LOG_LEVEL: 'loud' }, '/');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['CHORUS_HTTP_PORT', 'CHORUS_RRF_K', 'CHORUS_PROFILES', 'CHORUS_LOG_LEVEL']) expect(problems).toContain(name);
  });

  it('parseChorusConfig - stream byte limits: not set by default (the streams keep theirs); -1 or at least 1 MiB', () => {
    expect([parseChorusConfig({}, '/').bus.workflowMaxBytes, parseChorusConfig({}, '/').bus.deadLetterMaxBytes]).toEqual([undefined, undefined]);
    const c = parseChorusConfig({ CHORUS_STREAM_MAX_BYTES: String(50 * 1024 ** 3), CHORUS_DEAD_LETTER_MAX_BYTES: '-1' }, '/');
    expect([c.bus.workflowMaxBytes, c.bus.deadLetterMaxBytes]).toEqual([50 * 1024 ** 3, -1]);
    for (const bad of ['0', '1000', '-2', '2097152.5', '10GB']) {
      expect(() => parseChorusConfig({ CHORUS_STREAM_MAX_BYTES: bad }, '/')).toThrow(/CHORUS_STREAM_MAX_BYTES must be -1 \(no limit\) or a number of bytes of at least 1048576/);
    }
  });

  it('parseChorusConfig - RRF weights: each from 0 to the envelope\'s limit (1000), or start-up fails naming the entry', () => {
    expect(parseChorusConfig({ CHORUS_RRF_WEIGHTS: 'bm25=1000,trigram=0,wordvec=0.5' }, '/').search.rrfWeights).toEqual({ bm25: 1000, trigram: 0, wordvec: 0.5 });
    // A weight the envelope refuses would make every execution_plan a dead letter and every workflow time out.
    for (const bad of ['bm25=1001', 'bm25=-1', 'bm25=', 'bm25= ', 'bm25=Infinity', 'BM 25=1', 'bm25=1=2']) {
      expect(() => parseChorusConfig({ CHORUS_RRF_WEIGHTS: bad }, '/')).toThrow(/CHORUS_RRF_WEIGHTS .*weights from 0 to 1000/);
    }
    // A profile weighted twice: which one was meant?
    expect(() => parseChorusConfig({ CHORUS_RRF_WEIGHTS: 'bm25=1,bm25=3' }, '/')).toThrow('CHORUS_RRF_WEIGHTS gives bm25 two weights (1 and 3)');
    expect(() => parseChorusConfig({ CHORUS_RRF_WEIGHTS: 'bm25=0,trigram=0' }, '/')).toThrow('CHORUS_RRF_WEIGHTS gives every profile of CHORUS_PROFILES (bm25, trigram) weight 0');
    expect(parseChorusConfig({ CHORUS_RRF_WEIGHTS: 'bm25=0' }, '/').search.rrfWeights).toEqual({ bm25: 0 });
  });

  it('parseChorusConfig - CHORUS_PROFILES and CHORUS_APPS are sets: a name twice, or a list of nothing, is refused', () => {
    expect(() => parseChorusConfig({ CHORUS_PROFILES: 'bm25,bm25' }, '/')).toThrow('CHORUS_PROFILES names bm25 more than once');
    expect(() => parseChorusConfig({ CHORUS_PROFILES: ',' }, '/')).toThrow('CHORUS_PROFILES names nothing (","); leave it unset for the default, bm25,trigram');
    expect(() => parseChorusConfig({ CHORUS_APPS: 'hub,intent,hub' }, '/')).toThrow('CHORUS_APPS names hub more than once');
    // An unknown app is named with the ones there are; `profile` (the app's name where it runs alone) is `profiles`.
    expect(() => parseChorusConfig({ CHORUS_APPS: 'hub,brain' }, '/')).toThrow('CHORUS_APPS has invalid entries: brain (each one of profiles, hub, intent, planner, search, responder, ingress)');
    expect(parseChorusConfig({ CHORUS_APPS: 'profile,hub' }, '/').apps).toEqual(['profiles', 'hub']);
    expect(parseChorusConfig({ CHORUS_PROFILES: ' bm25 , trigram ' }, '/').profiles).toEqual(['bm25', 'trigram']);
  });
});
