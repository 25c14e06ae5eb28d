import { CliErrorTypes, reportFailure } from './cli.failure';

describe('reportFailure', () => {
  const capture = () => {
    const out = { stdout: [] as string[], stderr: [] as string[] };
    return { out, io: { stdout: (l: string) => out.stdout.push(l), stderr: (l: string) => out.stderr.push(l) } };
  };

  it('reportFailure - the text and its hint on stderr; without --json nothing on stdout; the exit code returned', () => {
    const { out, io } = capture();
    expect(reportFailure(io, false, { exitCode: 3, error_type: CliErrorTypes.Unreachable, message: 'cannot reach Chorus', hint: 'Is it running?' })).toBe(3);
    expect(out).toEqual({ stdout: [], stderr: ['chorus: cannot reach Chorus\nIs it running?'] });
  });

  it('reportFailure - with --json, also one line of JSON on stdout: error_type, message, and errors and status when given; no hint', () => {
    const { out, io } = capture();
    const failure = { exitCode: 1, error_type: 'NOT_RETRYABLE', message: 'nothing to retry', hint: 'a hint', status: 'completed' as const };
    expect(reportFailure(io, true, failure)).toBe(1);
    expect(out.stdout).toEqual(['{"error":{"error_type":"NOT_RETRYABLE","message":"nothing to retry","status":"completed"}}']);
    const more = capture();
    reportFailure(more.io, true, { exitCode: 2, error_type: 'INVALID_ENVELOPE', message: 'invalid query', text: 'invalid query:\n  --session …', errors: [{ field: '--session', messages: ['--session …'] }] });
    expect(more.out.stderr).toEqual(['chorus: invalid query:\n  --session …']);
    expect(JSON.parse(more.out.stdout[0])).toEqual({ error: { error_type: 'INVALID_ENVELOPE', message: 'invalid query', errors: [{ field: '--session', messages: ['--session …'] }] } });
  });
});
