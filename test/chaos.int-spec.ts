import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from '../scripts/chaos/chaos.scenarios';

/**
 * The quick chaos scenarios (the compiled apps of `npm test`'s build, as processes, on real
 * servers): nothing lost, nothing doubled, every workflow in exactly one terminal state.
 * `npm run chaos` runs all of them, larger, with a table.
 */
describe('chaos, quick', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'chorus-chaos-test-'));
  const root = join(__dirname, '..');
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it.each(['duplicate-storm', 'restart-nats', 'restart-hub', 'hanging-profile', 'slow-consumer'])(
    'chaos - %s: 0 lost, 0 duplicate effects, exactly one terminal state each',
    async (name) => {
      const row = await SCENARIOS[name]({ quick: true, count: 30, root, workDir });
      expect(row).toEqual(expect.objectContaining({ sent: 30, lost: 0, duplicate_effects: 0, not_exactly_one_terminal: 0 }));
      if (name === 'hanging-profile') expect(row.degraded).toBe(30);
      else expect(row.completed).toBe(30);
    },
    180_000,
  );
});
