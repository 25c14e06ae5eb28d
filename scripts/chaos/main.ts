import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChaosResult } from './chaos.driver';
import { SCENARIOS } from './chaos.scenarios';

/**
 * `npm run chaos [-- --quick] [--only a,b]`: each scenario against real servers and processes, then
 * a table. Exits 1 when any row lost a workflow, doubled an effect, or left one without exactly one
 * terminal state.
 */
const USAGE = `npm run chaos [-- options]
  --quick        shorter runs of every scenario
  --only a,b     these scenarios: ${Object.keys(SCENARIOS).join(', ')}
  --help         this text
Each scenario runs against its own servers and processes (several minutes in all, heavy load), then
a table; exits 1 when a row lost a workflow, doubled an effect or left one without exactly one
terminal state.`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) return void console.log(USAGE);
  const onlyAt = args.indexOf('--only');
  const unknownArgs = args.filter((a, i) => a !== '--quick' && a !== '--only' && !(onlyAt >= 0 && i === onlyAt + 1));
  if (unknownArgs.length > 0 || (onlyAt >= 0 && (!args[onlyAt + 1] || args[onlyAt + 1].startsWith('--')))) {
    console.error(`${unknownArgs.length ? `unknown argument(s): ${unknownArgs.join(' ')}` : '--only needs a list of scenarios'}\n${USAGE}`);
    process.exit(2);
  }
  const quick = args.includes('--quick');
  const only = onlyAt >= 0 ? args[onlyAt + 1].split(',') : Object.keys(SCENARIOS);
  const unknown = only.filter((n) => !SCENARIOS[n]);
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const root = resolve(__dirname, '..', '..', '..');
  const workDir = mkdtempSync(join(tmpdir(), 'chorus-chaos-'));
  const rows: ChaosResult[] = [];
  try {
    for (const name of only) {
      const t0 = Date.now();
      process.stdout.write(`${name} … `);
      const row = await SCENARIOS[name]({ quick, root, workDir });
      rows.push(row);
      console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  console.log(`\n${table(rows)}`);
  const bad = rows.filter((r) => r.lost > 0 || r.duplicate_effects > 0 || r.not_exactly_one_terminal > 0);
  if (bad.length) {
    console.error(`\nFAILED: ${bad.map((r) => r.scenario).join('; ')}`);
    process.exit(1);
  }
}

function table(rows: ChaosResult[]): string {
  const head = ['scenario', 'sent', 'completed', 'degraded', 'failed', 'timed out', 'lost', 'duplicate effects', '≠1 terminal', 'p50 ms', 'p99 ms', 'notes'];
  const body = rows.map((r) => [r.scenario, r.sent, r.completed, r.degraded, r.failed, r.timed_out, r.lost, r.duplicate_effects, r.not_exactly_one_terminal, r.p50_ms ?? '-', r.p99_ms ?? '-', r.notes].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
