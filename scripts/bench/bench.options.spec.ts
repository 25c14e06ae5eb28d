import { BenchUsageError, benchCommandLine, benchUsage, parseBenchOptions } from './bench.options';

function problems(argv: string[]): readonly string[] {
  try {
    parseBenchOptions(argv);
  } catch (e) {
    if (e instanceof BenchUsageError) return e.problems;
    throw e;
  }
  return [];
}

describe('parseBenchOptions', () => {
  it('parseBenchOptions - reads every option, in either --name value or --name=value form', () => {
    expect(parseBenchOptions(['--quick', '--only', 'floor-core,rrf', '--concurrency=1,16', '--duration', '0.5', '--warmup', '0', '--hub-checkpoints', '300,600', '--no-write'])).toEqual({
      help: false,
      quick: true,
      only: ['floor-core', 'rrf'],
      concurrency: [1, 16],
      durationS: 0.5,
      warmupS: 0,
      hubCheckpoints: [300, 600],
      write: false,
      noWrite: true,
      render: undefined,
    });
    expect(parseBenchOptions([])).toEqual(expect.objectContaining({ only: [], concurrency: undefined, durationS: undefined, quick: false }));
    expect(parseBenchOptions(['-h']).help).toBe(true);
  });

  it('parseBenchOptions - an unknown option is refused, not thrown as a stack trace', () => {
    expect(problems(['--bogus'])).toEqual(['--bogus is not an option']);
    expect(problems(['quick'])).toEqual(['quick: unexpected argument (the benchmark takes only options)']);
  });

  it('parseBenchOptions - numbers must be positive and finite, lists must name known systems and sections', () => {
    expect(problems(['--only', 'floor-core', '--concurrency', 'abc'])).toEqual(['--concurrency must be a comma-separated list of positive integers, got "abc"']);
    expect(problems(['--only', 'rrf', '--duration', '-5'])).toEqual(['--duration must be a positive number of seconds, got "-5"']);
    for (const bad of ['0', 'Infinity', 'NaN', '', ' ']) expect(problems(['--duration', bad])).toHaveLength(1);
    expect(problems(['--warmup', '-1'])).toEqual(['--warmup must be a number of seconds, 0 or more, got "-1"']);
    for (const bad of ['0', '1.5', '0x10', '1e2', '', '-4']) expect(problems([`--concurrency=${bad}`])).toHaveLength(1);
    expect(problems(['--hub-checkpoints', '100,0'])).toEqual(['--hub-checkpoints must be a comma-separated list of positive integers, got "100,0"']);
    expect(problems(['--only', 'floor-core,nope'])).toEqual(['--only nope: no such system or section']);
    expect(problems(['--only', ','])).toEqual(['--only needs at least one system or section']);
  });

  it('parseBenchOptions - lists every problem at once', () => {
    expect(problems(['--bogus', '--only', 'nope', '--concurrency', 'abc', '--duration', '-5', '--write', '--no-write', '--render'])).toEqual([
      '--bogus is not an option',
      '--render needs a value',
      '--only nope: no such system or section',
      '--concurrency must be a comma-separated list of positive integers, got "abc"',
      '--duration must be a positive number of seconds, got "-5"',
      '--write and --no-write contradict each other',
    ]);
  });

  it('parseBenchOptions - --render needs a saved run and takes no measuring option; switches take no value', () => {
    expect(problems(['--render', '/no/such/results.json', '--quick'])).toEqual(['--render /no/such/results.json: no such file', '--render measures nothing, so --quick would have no effect']);
    expect(problems(['--quick=yes'])).toEqual(['--quick takes no value']);
  });
});

describe('benchUsage', () => {
  it('benchUsage - names the command that was typed: chorus bench through the CLI, npm run bench otherwise', () => {
    expect(benchUsage('chorus bench').split('\n')[0]).toBe('Usage: chorus bench [options]');
    expect(benchUsage(undefined).split('\n')[0]).toBe('Usage: npm run bench [-- options]');
    expect(benchCommandLine(['--quick'], 'chorus bench')).toBe('chorus bench --quick');
    expect(benchCommandLine(['--quick'], undefined)).toBe('npm run bench -- --quick');
    expect(benchCommandLine([], undefined)).toBe('npm run bench');
  });
});
