import { ChorusClient } from '@chorus/bus';
import { InvalidEnvelopeError } from '@chorus/envelope';
import { isTimeFilter } from '@chorus/envelope';
import { UsageError, parseCliArgs, toFlagErrors } from './cli.args';

describe('parseCliArgs', () => {
  it("parseCliArgs - no command is a usage error; --help asks for the usage, a command's own with a command", () => {
    expect(() => parseCliArgs([])).toThrow('missing command');
    expect(() => parseCliArgs(['--json'])).toThrow('missing command');
    expect(parseCliArgs(['--help']).command).toBe('help');
    expect(parseCliArgs(['-h']).command).toBe('help');
    expect(parseCliArgs(['list', '--help'])).toEqual(expect.objectContaining({ command: 'help', helpFor: 'list' }));
    expect(parseCliArgs(['help', 'dead-letters'])).toEqual(expect.objectContaining({ command: 'help', helpFor: 'dead-letters' }));
    expect(parseCliArgs(['--help']).helpFor).toBeUndefined();
  });

  // The samples the user test tried, and the edges of the API's rule (isTimeFilter).
  const times = [
    '2026-12-01T15:00:00Z',
    '2026-12-01T15:00:00.123+01:00',
    '2026-12-01',
    '2026-12-01 15:00',
    '2026-12-01 15:00:00Z',
    '2026-12-01T15:00',
    '2026-12-01T15:00:00',
    '2026-12-01t15:00:00z',
    '2026-02-30',
    '2026-02-30T10:00:00Z',
    '2026-W48',
    '2026-335',
    '20261201T150000Z',
    'yesterday',
    'Dec 1, 2026',
  ];

  it.each(times)('parseCliArgs - --since/--until %j: accepted exactly when the HTTP API accepts it', (value) => {
    const accepted = (flag: string) => {
      try {
        parseCliArgs(['list', flag, value]);
        return true;
      } catch (e) {
        expect((e as Error).message).toBe(`${flag} must be an RFC 3339 date-time (2026-11-30T10:30:00Z) or a date (2026-11-30)`);
        return false;
      }
    };
    expect({ since: accepted('--since'), until: accepted('--until') }).toEqual({ since: isTimeFilter(value), until: isTimeFilter(value) });
  });

  it('parseCliArgs - every bad value is named at once, without the whole usage; an unknown command or option still shows it', () => {
    const error = (argv: string[]) => {
      try {
        parseCliArgs(argv);
      } catch (e) {
        return { message: (e as UsageError).message, showUsage: (e as UsageError).showUsage };
      }
      return null;
    };
    expect(error(['query', 'x', '--top-k', '0', '--deadline-ms', 'soon', '--idempotency-key', 'has space'])).toEqual({
      message: 'invalid options:\n  --top-k must be a positive integer\n  --deadline-ms must be a positive integer\n  --idempotency-key must be 1 to 256 printable ASCII characters, no spaces',
      showUsage: false,
    });
    expect(error(['list', '--limit', '0'])).toEqual({ message: '--limit must be a positive integer', showUsage: false });
    expect(error(['bogus'])).toEqual({ message: 'unknown command: bogus', showUsage: true });
    expect(error(['list', '--bogus'])?.showUsage).toBe(true);
  });

  it('parseCliArgs - a time without a zone is refused, as over HTTP, instead of being read as UTC', () => {
    expect(() => parseCliArgs(['list', '--since', '2026-12-01 15:00'])).toThrow(/^--since must be an RFC 3339 date-time/);
    expect(parseCliArgs(['list', '--since', '2026-12-01', '--until', '2026-12-01T15:00:00Z'])).toEqual(expect.objectContaining({ since: '2026-12-01', until: '2026-12-01T15:00:00Z' }));
  });
});

describe('toFlagErrors', () => {
  const client = new ChorusClient(undefined as never, {
    agent: 'cli',
    correlation: { strategy: 'uuidv7', secret: 'x' },
    defaultDeadlineMs: 10_000,
    defaultTopK: 10,
    requestTimeoutMs: 1000,
    terminalGraceMs: 1000,
  });
  const invalid = (request: Parameters<ChorusClient['checkQuery']>[0]): InvalidEnvelopeError => {
    try {
      client.checkQuery(request);
    } catch (e) {
      if (e instanceof InvalidEnvelopeError) return e;
      throw e;
    }
    throw new Error('the query was valid');
  };

  it('toFlagErrors - the envelope fields a query is built from are named by the flags that set them', () => {
    const e = invalid({ query: 'x', tenant_id: 'Bad Tenant', session_id: 'bad session', profiles: ['Bad'], top_k: 1000 });
    const lines = toFlagErrors(e.errors);
    expect(lines).toEqual(
      expect.arrayContaining([
        '--session must match [A-Za-z0-9_-]{1,64}',
        expect.stringMatching(/^--profile: each profile must match/),
        expect.stringMatching(/^--top-k must not be greater than \d+$/),
        expect.stringMatching(/^--tenant must match/),
      ]),
    );
    expect(lines.join('\n')).not.toMatch(/payload\.|session_id|top_k|tenant_id/);
  });

  it("toFlagErrors - the hub's refusal of a list names the list's flags; an unknown field is kept as it is", () => {
    const lines = toFlagErrors([
      { field: 'status', messages: ['status must be one of running, completed'] },
      { field: 'limit', messages: ['limit must be an integer from 1 to 500'] },
      { field: 'tenant_id', messages: ['tenant_id is not a valid tenant id'] },
      { field: 'something_new', messages: ['something_new is wrong'] },
    ]);
    expect(lines).toEqual(['--status must be one of running, completed', '--limit must be an integer from 1 to 500', '--tenant is not a valid tenant id', 'something_new is wrong']);
  });
});
