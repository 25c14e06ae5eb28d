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
    expect(parseCliArgs(['help']).helpFor).toBeUndefined();
    expect(() => parseCliArgs(['help', 'bogus'])).toThrow('unknown command: bogus');
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

  const error = (argv: string[]) => {
    try {
      parseCliArgs(argv);
    } catch (e) {
      return { message: (e as UsageError).message, showUsage: (e as UsageError).showUsage, command: (e as UsageError).command };
    }
    return null;
  };

  it('parseCliArgs - every bad value is named at once, without the whole usage; an unknown command or option still shows it', () => {
    expect(error(['query', 'x', '--top-k', '0', '--deadline-ms', 'soon', '--idempotency-key', 'has space'])).toEqual({
      message: 'invalid options:\n  --top-k must be a positive integer\n  --deadline-ms must be a positive integer\n  --idempotency-key must be 1 to 256 printable ASCII characters, no spaces',
      showUsage: false,
      command: 'query',
    });
    expect(error(['list', '--limit', '0'])).toEqual({ message: '--limit must be a positive integer', showUsage: false, command: 'list' });
    for (const odd of ['0x5', '1e3', '0b11', ' 5', '5.0', '99999999999999999999']) expect(error(['list', '--limit', odd])).toEqual({ message: '--limit must be a positive integer', showUsage: false, command: 'list' });
    expect(error(['bogus'])).toEqual({ message: 'unknown command: bogus', showUsage: true, command: undefined });
    expect(error(['list', '--bogus'])).toEqual({ message: '--bogus is not an option', showUsage: true, command: 'list' });
  });

  it("parseCliArgs - another command's option is a usage error naming every such option at once, and who takes it", () => {
    expect(error(['dead-letters', '--status', 'failed'])).toEqual({ message: '--status is not an option of dead-letters (list takes it)', showUsage: true, command: 'dead-letters' });
    expect(error(['query', 'x', '--since', '2026-01-01', '--limit', '3', '--status', 'failed', '--cursor', 'abc'])).toEqual({
      message:
        'invalid options:\n  --since is not an option of query (list takes it)\n  --limit is not an option of query (list and dead-letters take it)\n  --status is not an option of query (list takes it)\n  --cursor is not an option of query (list takes it)',
      showUsage: true,
      command: 'query',
    });
    expect(error(['cancel', 'id', '--deadline-ms', '5'])?.message).toBe('--deadline-ms is not an option of cancel (query takes it)');
    expect(error(['status', 'id', '--profile', 'x', '--require-all'])?.message).toBe(
      'invalid options:\n  --profile is not an option of status (query takes it)\n  --require-all is not an option of status (query takes it)',
    );
    expect(error(['watch', 'id', '--wait'])?.message).toBe('--wait is not an option of watch (query and retry take it)');
    // What each command takes, and the options of every command, still pass.
    expect(parseCliArgs(['retry', 'id', '--wait', '--tenant', 'acme', '--json', '--nats', 'nats://x:1'])).toEqual(
      expect.objectContaining({ command: 'retry', wait: true, tenant: 'acme', json: true, nats: 'nats://x:1' }),
    );
    expect(parseCliArgs(['dead-letters', '--limit', '5', '--tenant', 'acme'])).toEqual(expect.objectContaining({ limit: 5, tenant: 'acme' }));
  });

  it("parseCliArgs - option errors in the CLI's own words, every one at once: unknown, missing value, a value starting with '-'", () => {
    // Node's parseArgs stopped at the first: "Option '--deadline-ms' argument is ambiguous".
    expect(error(['query', 'x', '--top-k', 'abc', '--deadline-ms', '-5', '--idempotency-key', 'a b'])).toEqual({
      message: 'invalid options:\n  --top-k must be a positive integer\n  --deadline-ms must be a positive integer\n  --idempotency-key must be 1 to 256 printable ASCII characters, no spaces',
      showUsage: false,
      command: 'query',
    });
    expect(parseCliArgs(['query', 'x', '--session', '-abc']).session).toBe('-abc');
    expect(parseCliArgs(['query', 'x', '--deadline-ms=5000']).deadlineMs).toBe(5000);
    const bogus = error(['query', 'x', '--bogus', '-z', '--top-k']);
    expect(bogus).toEqual({ message: 'invalid options:\n  --bogus is not an option\n  -z is not an option\n  --top-k needs a value', showUsage: true, command: 'query' });
    expect(bogus!.message).not.toMatch(/parseArgs|'--'|ambiguous/);
    expect(error(['list', '--tenant', '--json'])?.message).toBe('--tenant needs a value (--json is an option; a value that starts with "-" is written --tenant=T)');
    expect(error(['list', '--json=yes', '--tenant', 'a', '--tenant', 'b'])?.message).toBe('invalid options:\n  --json takes no value (given "yes")\n  --tenant is given more than once; give it once');
    expect(parseCliArgs(['query', 'x', '--profile', 'a', '--profile', 'b']).profiles).toEqual(['a', 'b']);
  });

  it('parseCliArgs - a missing or extra argument is named with the options that are wrong, and shows the usage', () => {
    expect(error(['status', '--bogus'])).toEqual({ message: 'invalid command line:\n  --bogus is not an option\n  status needs exactly one argument: a correlation id', showUsage: true, command: 'status' });
    expect(error(['list', 'extra'])).toEqual({ message: 'list takes no argument, not "extra"', showUsage: true, command: 'list' });
    expect(error(['query'])).toEqual({ message: 'query needs exactly one argument: the query text, in quotes', showUsage: true, command: 'query' });
    // After `--`, a word is an argument even when it starts with '-'.
    expect(parseCliArgs(['query', '--', '-x marks the spot']).positional).toEqual(['-x marks the spot']);
  });

  it("parseCliArgs - a usage error lists every problem by what it is about, for --json's errors", () => {
    const errors = (argv: string[]) => {
      try {
        parseCliArgs(argv);
      } catch (e) {
        return (e as UsageError).errors;
      }
      return null;
    };
    expect(errors(['status', '--bogus', '--limit', '0', '--tenant', 'a', '--tenant', 'b'])).toEqual([
      { field: '--bogus', messages: ['--bogus is not an option'] },
      { field: '--tenant', messages: ['--tenant is given more than once; give it once'] },
      { field: '--limit', messages: ['--limit is not an option of status (list and dead-letters take it)'] },
      { field: 'argument', messages: ['status needs exactly one argument: a correlation id'] },
    ]);
    expect(errors(['bogus'])).toEqual([{ field: 'command', messages: ['unknown command: bogus'] }]);
    expect(errors(['list', '--json=yes', '--json=no'])).toEqual([{ field: '--json', messages: ['--json takes no value (given "yes")', '--json takes no value (given "no")'] }]);
  });

  it('parseCliArgs - --help with a value is a usage error, not ignored', () => {
    expect(error(['list', '--help=x'])).toEqual({ message: '--help takes no value (given "x")', showUsage: false, command: 'list' });
    expect(parseCliArgs(['list', '--help']).command).toBe('help');
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
