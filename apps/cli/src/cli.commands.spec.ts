import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_NAMES, COMMANDS, commandUsage, globalUsage, readmeSynopses } from './cli.commands';

/** The lines of the README's "Command line" block, comments dropped and wrapped lines joined. */
function readmeBlock(): string[] {
  const readme = readFileSync(join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Command line'));
  const block = /```\n([\s\S]*?)```/.exec(section)![1];
  return block
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.replace(/\s+#.*$/, ''))
    .reduce<string[]>((lines, line) => (/^\s/.test(line) ? [...lines.slice(0, -1), `${lines.at(-1)} ${line.trim()}`] : [...lines, line]), []);
}

const normalized = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('CLI usage', () => {
  it("commandUsage - the README's synopsis of every command is the one its --help prints", () => {
    expect(readmeBlock()).toEqual(readmeSynopses().map(normalized));
  });

  it.each(COMMAND_NAMES)('commandUsage - %s: its synopsis, then every option it takes and the options every command takes', (command) => {
    const usage = commandUsage(command);
    expect(usage.startsWith(`Usage: chorus ${command}`)).toBe(true);
    for (const option of [...COMMANDS[command].options, 'json', 'nats']) expect(usage).toMatch(new RegExp(`^ {2}--${option}\\b`, 'm'));
    expect(usage).toMatch(/^ {2}-h, --help\b/m);
    // Only its own: another command's option is not offered.
    const others = new Set(COMMAND_NAMES.flatMap((c) => COMMANDS[c].options).filter((o) => !COMMANDS[command].options.includes(o)));
    for (const option of others) expect(usage).not.toMatch(new RegExp(`--${option}\\b`));
  });

  it('globalUsage - every command with its synopsis, and no line wider than 100 columns', () => {
    const usage = globalUsage();
    for (const command of COMMAND_NAMES) expect(normalized(usage)).toContain(normalized(readmeSynopses()[COMMAND_NAMES.indexOf(command)]).replace(/^chorus /, ''));
    for (const text of [usage, ...COMMAND_NAMES.map(commandUsage)]) expect(text.split('\n').filter((line) => line.length > 100)).toEqual([]);
  });
});
