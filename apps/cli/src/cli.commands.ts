import { WORKFLOW_STATUSES } from '@chorus/envelope';

/**
 * The CLI's commands and the options each takes: one table, which the parser checks a command
 * line against and `--help` (and the README's synopsis, which a spec compares) is written from.
 */
export const COMMAND_NAMES = ['query', 'status', 'history', 'watch', 'list', 'dead-letters', 'cancel', 'retry'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export const OPTION_NAMES = ['wait', 'require-all', 'profile', 'top-k', 'deadline-ms', 'tenant', 'session', 'idempotency-key', 'status', 'agent', 'since', 'until', 'limit', 'cursor'] as const;
export type OptionName = (typeof OPTION_NAMES)[number];

/** The options every command takes. */
export const GLOBAL_OPTION_NAMES = ['json', 'nats', 'help'] as const;
export type GlobalOptionName = (typeof GLOBAL_OPTION_NAMES)[number];

export interface OptionSpec {
  /** The value's placeholder (`--tenant T`); absent for a flag, which takes none. */
  readonly value?: string;
  /** Given again, it adds a value (`--profile a --profile b`) instead of being refused. */
  readonly multiple?: boolean;
  /** What it does, unless the command says it in its own words. */
  readonly help: string;
}

export interface CommandSpec {
  /** Its one argument, as the synopsis shows it; absent for a command that takes none. */
  readonly argument?: string;
  /** What it does, for the list of commands and its own `--help`. */
  readonly summary: string;
  /** The options it takes, in the synopsis's order. */
  readonly options: readonly OptionName[];
  /** What an option does for this command, where the common words would be wrong. */
  readonly optionHelp?: Partial<Record<OptionName, string>>;
}

const TIME_FORMS = 'an RFC 3339 date-time (2026-11-30T10:30:00Z) or a date (2026-11-30, its midnight UTC)';

export const OPTIONS: Readonly<Record<OptionName, OptionSpec>> = {
  wait: { help: 'wait for the workflow to end, then print it' },
  'require-all': { help: 'fail the workflow when a planned profile is missing, instead of completing it degraded' },
  profile: { value: 'NAME', multiple: true, help: 'search this profile (give it again for more); default: the planner chooses' },
  'top-k': { value: 'N', help: 'how many results (default CHORUS_DEFAULT_TOP_K, 10)' },
  'deadline-ms': { value: 'MS', help: 'the time the workflow has, from 100 to CHORUS_MAX_DEADLINE_MS (default CHORUS_DEFAULT_DEADLINE_MS, 10000)' },
  tenant: { value: 'T', help: 'the tenant the workflow is in (default: default)' },
  session: { value: 'S', help: 'the session the query belongs to ([A-Za-z0-9_-]{1,64})' },
  'idempotency-key': { value: 'K', help: 'the same key and query again name the same workflow and start nothing new; once it has ended and left the ledger, the key is refused (exit 2) (1 to 256 printable ASCII characters, no spaces)' },
  status: { value: 'S', help: `only workflows in this status: ${WORKFLOW_STATUSES.join(', ')}` },
  agent: { value: 'A', help: 'only workflows this agent took part in' },
  since: { value: 'T', help: `only workflows started at T or later: ${TIME_FORMS}` },
  until: { value: 'T', help: 'only workflows started at T or earlier (the same forms)' },
  limit: { value: 'N', help: 'at most N workflows, 1 to 500 (default 50)' },
  cursor: { value: 'C', help: 'the next page: the cursor the page before ended with' },
};

export const GLOBAL_OPTIONS: Readonly<Record<GlobalOptionName, OptionSpec>> = {
  json: { help: 'print JSON instead of text' },
  nats: {
    value: 'URL',
    help: 'NATS server (default: NATS_URL, else nats://127.0.0.1:4222); a secured one is reached as the "cli" user of CHORUS_NATS_CREDENTIALS, else NATS_USER and NATS_PASS, else NATS_TOKEN',
  },
  help: { help: 'this help' },
};

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  query: {
    argument: '"<text>"',
    summary: 'submit a query; prints its correlation id, then (with --wait) the result',
    options: ['wait', 'require-all', 'profile', 'top-k', 'deadline-ms', 'tenant', 'session', 'idempotency-key'],
    optionHelp: { tenant: 'the tenant the workflow belongs to (default: default)' },
  },
  status: { argument: '<id>', summary: "the workflow's status, steps and result", options: ['tenant'] },
  history: { argument: '<id>', summary: "the workflow's envelopes, in stream order", options: ['tenant'] },
  watch: {
    argument: '<id>',
    summary: 'follow the workflow live, step by step, until it ends (or until CHORUS_WATCH_GRACE_MS after its deadline if the hub never says)',
    options: ['tenant'],
  },
  list: {
    summary: 'recent workflows, newest first (--cursor: the next page; --since, --until: an RFC 3339 date-time, 2026-11-30T10:30:00Z, or a date, 2026-11-30)',
    options: ['status', 'agent', 'since', 'until', 'limit', 'cursor', 'tenant'],
    optionHelp: { tenant: 'the tenant whose workflows to list (default: default)' },
  },
  'dead-letters': {
    summary: 'the newest dead letters (envelopes refused as invalid, steps given up), newest first, with the reason and what was wrong (default 20)',
    options: ['limit', 'tenant'],
    optionHelp: { limit: 'at most N dead letters (default 20)', tenant: "only this tenant's dead letters (default: every tenant's)" },
  },
  cancel: { argument: '<id>', summary: 'cancel a workflow', options: ['tenant'] },
  retry: {
    argument: '<id>',
    summary: "run again a workflow that failed, timed out, was cancelled or completed degraded: prints the new workflow's id, then (with --wait) its result",
    options: ['wait', 'tenant'],
    optionHelp: { wait: 'wait for the new workflow to end, then print it' },
  },
};

/** `chorus bench` runs the benchmark script, which parses (and documents) its own options. */
const BENCH = { synopsis: 'bench [options]', summary: 'run the benchmark (as npm run bench; chorus bench --help lists its options)' };

const WIDTH = 100;

const EXIT_CODES = `Exit codes: 0 completed/ok; 1 workflow failed, timed out or cancelled, no such workflow,
(cancel) already finished, or (retry) nothing to retry; 2 usage error, bad configuration, NATS
credentials refused, or an idempotency key used for another query or whose workflow ended and left
the ledger; 3 Chorus unreachable or its hub behind (it did not record the workflow or confirm its
end in time).`;

/** `[--tenant T]`, `[--wait]`, `[--profile NAME]...` */
function optionSynopsis(name: OptionName): string {
  const o = OPTIONS[name];
  return `[--${name}${o.value ? ` ${o.value}` : ''}]${o.multiple ? '...' : ''}`;
}

/**
 * The command and what it takes, its lines wrapped under its first option: `list [--status S] …
 * [--tenant T]`. `column`: where it is printed, so that its lines end before the width.
 */
export function synopsisOf(command: CommandName, prefix = '', column = 0): string {
  const spec = COMMANDS[command];
  const head = `${prefix}${command}${spec.argument ? ` ${spec.argument}` : ''}`;
  return wrap([head, ...spec.options.map(optionSynopsis)], ' '.repeat(head.length + 1), WIDTH - column, 0);
}

/** What `chorus <command> --help` prints: its synopsis, what it does, and every option it takes. */
export function commandUsage(command: CommandName): string {
  const spec = COMMANDS[command];
  const rows = [
    ...spec.options.map((name) => option(`--${name}`, OPTIONS[name], spec.optionHelp?.[name])),
    ...GLOBAL_OPTION_NAMES.map((name) => option(name === 'help' ? '-h, --help' : `--${name}`, GLOBAL_OPTIONS[name])),
  ];
  return [`Usage: ${synopsisOf(command, 'chorus ', 'Usage: '.length).replace(/\n/g, `\n${' '.repeat('Usage: '.length)}`)}`, '', paragraph(spec.summary, ''), '', 'Options:', ...rows, '', '(chorus --help: every command, and the exit codes)'].join('\n');
}

/** What `chorus --help` prints: every command, the options every command takes, the exit codes. */
export function globalUsage(): string {
  const commands = COMMAND_NAMES.flatMap((name) => [`  ${synopsisOf(name, '', 2).replace(/\n/g, '\n  ')}`, paragraph(COMMANDS[name].summary, ' '.repeat(6))]);
  commands.push(`  ${BENCH.synopsis}`, paragraph(BENCH.summary, ' '.repeat(6)));
  const globals = GLOBAL_OPTION_NAMES.map((name) => option(name === 'help' ? '-h, --help' : `--${name}`, GLOBAL_OPTIONS[name], name === 'help' ? 'this help; chorus <command> --help: that command\'s' : undefined));
  return ['Usage: chorus <command> [options]', '', 'Commands:', ...commands, '', 'Options (every command takes them):', ...globals, '', EXIT_CODES].join('\n');
}

/** Every synopsis line the README's "Command line" block should show (a spec compares them). */
export function readmeSynopses(): string[] {
  return [...COMMAND_NAMES.map((name) => synopsisOf(name, 'chorus ')), `chorus ${BENCH.synopsis}`];
}

const OPTION_COLUMN = 24;

function option(label: string, spec: OptionSpec, help = spec.help): string {
  const left = `  ${label}${spec.value ? ` ${spec.value}` : ''}`;
  const indent = ' '.repeat(OPTION_COLUMN);
  const text = wrap(help.split(' '), indent, WIDTH);
  return left.length < OPTION_COLUMN ? `${left.padEnd(OPTION_COLUMN)}${text}` : `${left}\n${indent}${text}`;
}

function paragraph(text: string, indent: string): string {
  return indent + wrap(text.split(' '), indent, WIDTH);
}

/**
 * Words joined by spaces, with a new line (starting with `indent`) before one that would pass
 * `width`; the first line starts at column `start`.
 */
function wrap(words: readonly string[], indent: string, width: number, start = indent.length): string {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const room = width - (lines.length === 0 ? start : indent.length);
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines.join(`\n${indent}`);
}
