import { runCli } from './cli';

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { stdout: (l) => out.push(l), stderr: (l) => err.push(l), env, cwd: process.cwd() });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('chorus --nats', () => {
  it('a bad address given with --nats is named by the flag, not by the NATS_URL it sets', async () => {
    const r = await run(['list', '--nats', 'nats://127.0.0.1:99999', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--nats: "nats://127.0.0.1:99999" is not a NATS server address');
    expect(r.stderr).not.toContain('NATS_URL');
    expect(JSON.parse(r.stdout).error.message).toContain('--nats: "nats://127.0.0.1:99999"');
  });

  it('a bad NATS_URL, without --nats, is still named NATS_URL', async () => {
    const r = await run(['list'], { NATS_URL: 'bad url' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NATS_URL: "bad url" is not a NATS server address');
  });
});
