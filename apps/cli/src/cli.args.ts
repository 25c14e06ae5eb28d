import { parseArgs } from 'node:util';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE, TIME_FILTER_RULE, isTimeFilter, type FieldError } from '@chorus/envelope';
import { COMMAND_NAMES, COMMANDS, GLOBAL_OPTIONS, globalUsage, OPTION_NAMES, OPTIONS, type CommandName, type OptionName, type OptionSpec } from './cli.commands';

/** What `chorus --help` prints. */
export const USAGE = globalUsage();

export interface CliArgs {
  command: CommandName | 'help';
  /** With `help`: the command whose usage to print (`chorus list --help`, `chorus help list`); absent: every command's. */
  helpFor?: CommandName;
  positional: string[];
  wait: boolean;
  requireAll: boolean;
  json: boolean;
  profiles: string[];
  topK?: number;
  deadlineMs?: number;
  tenant?: string;
  session?: string;
  idempotencyKey?: string;
  status?: string;
  agent?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
  nats?: string;
}

export class UsageError extends Error {
  readonly code = 'USAGE';
  constructor(
    message: string,
    /** False for a bad value of a known flag: the one line says what to fix; the whole usage would bury it. */
    readonly showUsage = true,
    /** The command whose usage to show; absent: every command's. */
    readonly command?: CommandName,
    /** Every problem by what it is about (`--json`'s `errors`): the option as written, `command` or `argument`. */
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }
}

function isCommand(name: string | undefined): name is CommandName {
  return (COMMAND_NAMES as readonly (string | undefined)[]).includes(name);
}

/** A problem with the command line; `value` ones alone do not call for the usage. */
interface Problem {
  kind: 'structure' | 'value';
  /** What it is about, as `--json`'s `errors` name it: the option as written (`--limit`), `command` or `argument`. */
  field: string;
  text: string;
}

/** Every option of every command, for parseArgs: it splits the words, the CLI judges them (see {@link scan}). */
const PARSE_OPTIONS = Object.fromEntries(
  Object.entries({ ...OPTIONS, ...GLOBAL_OPTIONS }).map(([name, o]) => [name, { type: o.value ? 'string' : 'boolean', ...(name === 'help' ? { short: 'h' } : {}) }] as const),
) as Record<string, { type: 'string' | 'boolean'; short?: string }>;

/**
 * Reads `chorus <command> [argument] [options]` against the command's own options, and names every
 * problem at once: an option that does not exist or that this command does not take (another
 * command's, which it would otherwise ignore), a missing or extra argument, a bad value.
 */
export function parseCliArgs(argv: string[]): CliArgs {
  const { positionals, values, problems } = scan(argv);
  const [command, ...positional] = positionals;
  const end = argv.indexOf('--');
  if ((end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')) {
    return { ...defaults(), command: 'help', helpFor: isCommand(command) ? command : undefined };
  }
  if (command === 'help') {
    // `chorus help bogus` is a mistake to name, not a request for every command's usage.
    if (positional[0] !== undefined && !isCommand(positional[0])) throw usageError([{ kind: 'structure', field: 'command', text: `unknown command: ${positional[0]}` }]);
    return { ...defaults(), command: 'help', helpFor: positional[0] };
  }
  const unknown = problems.filter((p) => p.kind === 'structure');
  if (command === undefined) throw usageError([{ kind: 'structure', field: 'command', text: 'missing command' }, ...unknown]);
  if (!isCommand(command)) throw usageError([{ kind: 'structure', field: 'command', text: `unknown command: ${command}` }, ...unknown]);
  const spec = COMMANDS[command];
  for (const name of values.keys()) {
    if (!isOption(name) || spec.options.includes(name)) continue;
    const takers = COMMAND_NAMES.filter((c) => COMMANDS[c].options.includes(name));
    problems.push({ kind: 'structure', field: `--${name}`, text: `--${name} is not an option of ${command} (${joinAnd(takers)} ${takers.length === 1 ? 'takes' : 'take'} it)` });
  }
  if (spec.argument && positional.length !== 1) {
    problems.push({ kind: 'structure', field: 'argument', text: command === 'query' ? 'query needs exactly one argument: the query text, in quotes' : `${command} needs exactly one argument: a correlation id` });
  } else if (!spec.argument && positional.length > 0) {
    problems.push({ kind: 'structure', field: 'argument', text: `${command} takes no argument, not ${positional.map((p) => JSON.stringify(p)).join(' ')}` });
  }
  const taken = (name: OptionName): string | undefined => (spec.options.includes(name) ? values.get(name)?.at(-1) : undefined);
  const flag = (name: OptionName): boolean => taken(name) !== undefined;
  const args: CliArgs = {
    command,
    positional,
    wait: flag('wait'),
    requireAll: flag('require-all'),
    json: values.has('json'),
    profiles: spec.options.includes('profile') ? (values.get('profile') ?? []) : [],
    topK: int('--top-k', taken('top-k'), problems),
    deadlineMs: int('--deadline-ms', taken('deadline-ms'), problems),
    tenant: taken('tenant'),
    session: taken('session'),
    idempotencyKey: idempotencyKey(taken('idempotency-key'), problems),
    status: taken('status'),
    agent: taken('agent'),
    since: timeFilter('--since', taken('since'), problems),
    until: timeFilter('--until', taken('until'), problems),
    limit: int('--limit', taken('limit'), problems),
    cursor: taken('cursor'),
    nats: values.get('nats')?.at(-1),
  };
  if (problems.length > 0) throw usageError(problems, command);
  return args;
}

/**
 * The words of the command line: its positionals, each known option's values (a flag's: `''`),
 * and what is wrong with the options as written. parseArgs splits them (`--x=v`, `-h`, `--`), but
 * not strictly: its strict mode stops at the first problem, in its own words ("argument is
 * ambiguous" for `--deadline-ms -5`). A value that starts with "-" is taken as the value, as
 * parseArgs does, unless it is an option itself (`--tenant --json`): then the value is missing.
 */
function scan(argv: string[]): { positionals: string[]; values: Map<string, string[]>; problems: Problem[] } {
  const { tokens } = parseArgs({ args: argv, options: PARSE_OPTIONS, allowPositionals: true, strict: false, tokens: true });
  const positionals: string[] = [];
  const values = new Map<string, string[]>();
  const problems: Problem[] = [];
  const unknown = new Set<string>();
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    if (t.kind !== 'option') continue;
    if (t.name === 'help') {
      // `--help=x` asks for nothing the CLI knows: said, not ignored (a bare --help was handled before).
      if (t.inlineValue) problems.push({ kind: 'value', field: '--help', text: `--help takes no value (given ${JSON.stringify(t.value)})` });
      continue;
    }
    const spec = optionSpec(t.name);
    if (!spec) {
      // `--bogus=1` and `--bogus` are one unknown option.
      if (!unknown.has(t.rawName)) problems.push({ kind: 'structure', field: t.rawName, text: `${t.rawName} is not an option` });
      unknown.add(t.rawName);
      continue;
    }
    const given = values.get(t.name) ?? [];
    if (!spec.value) {
      if (t.inlineValue) problems.push({ kind: 'value', field: `--${t.name}`, text: `--${t.name} takes no value (given ${JSON.stringify(t.value)})` });
      values.set(t.name, ['']);
      continue;
    }
    if (t.value === undefined || (!t.inlineValue && isOptionWord(t.value))) {
      const after = t.value === undefined ? '' : ` (${t.value} is an option; a value that starts with "-" is written --${t.name}=${spec.value})`;
      problems.push({ kind: 'value', field: `--${t.name}`, text: `--${t.name} needs a value${after}` });
      continue;
    }
    if (given.length === 1 && !spec.multiple) problems.push({ kind: 'value', field: `--${t.name}`, text: `--${t.name} is given more than once; give it once` });
    values.set(t.name, [...given, t.value]);
  }
  return { positionals, values, problems };
}

/** A known option's spec (own properties only: `--constructor` is not one). */
function optionSpec(name: string): OptionSpec | undefined {
  if (Object.hasOwn(OPTIONS, name)) return OPTIONS[name as OptionName];
  if (Object.hasOwn(GLOBAL_OPTIONS, name)) return GLOBAL_OPTIONS[name as keyof typeof GLOBAL_OPTIONS];
  return undefined;
}

/** `--json`, `-h`: a word that is an option, not a value of the one before it. */
function isOptionWord(word: string): boolean {
  return word.startsWith('--') || word === '-h';
}

function isOption(name: string): name is OptionName {
  return (OPTION_NAMES as readonly string[]).includes(name);
}

/** One problem, or every one under a heading; the usage of the command when the line is malformed, not when a value is. */
function usageError(problems: readonly Problem[], command?: CommandName): UsageError {
  const showUsage = problems.some((p) => p.kind === 'structure');
  const errors: FieldError[] = [];
  for (const p of problems) {
    const known = errors.find((e) => e.field === p.field);
    if (known) (known.messages as string[]).push(p.text);
    else errors.push({ field: p.field, messages: [p.text] });
  }
  if (problems.length === 1) return new UsageError(problems[0].text, showUsage, command, errors);
  // Each option problem is about an option; any other (a missing argument) makes it the command line's.
  const heading = problems.every((p) => p.field.startsWith('-')) ? 'invalid options' : 'invalid command line';
  return new UsageError(`${heading}:\n${problems.map((p) => `  ${p.text}`).join('\n')}`, showUsage, command, errors);
}

function joinAnd(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** The same rule as HTTP's Idempotency-Key: a key the ingress would refuse is refused here too. */
function idempotencyKey(value: string | undefined, problems: Problem[]): string | undefined {
  if (value !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(value)) problems.push({ kind: 'value', field: '--idempotency-key', text: `--idempotency-key ${IDEMPOTENCY_KEY_RULE}` });
  return value;
}

/**
 * The HTTP API's rule for `since`/`until`: the hub reads anything Date.parse does, so
 * `2026-12-01 15:00` would pass as local time there.
 */
function timeFilter(name: string, value: string | undefined, problems: Problem[]): string | undefined {
  if (value !== undefined && !isTimeFilter(value)) problems.push({ kind: 'value', field: name, text: `${name} must be ${TIME_FILTER_RULE}` });
  return value;
}

function int(name: string, value: string | undefined, problems: Problem[]): number | undefined {
  if (value === undefined) return undefined;
  // Decimal digits only: Number() also reads `0x10`, `1e3`, `0b11` and ` 5 `.
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) problems.push({ kind: 'value', field: name, text: `${name} must be a positive integer` });
  return n;
}

/** The CLI's name for a field of the envelope or of a hub request it built from the command line. */
const FIELD_FLAGS: Readonly<Record<string, string>> = {
  'payload.query': 'the query',
  'payload.session_id': '--session',
  'payload.profiles': '--profile',
  'payload.top_k': '--top-k',
  'payload.require_all': '--require-all',
  deadline: '--deadline-ms',
  tenant_id: '--tenant',
  correlation_id: 'the id',
  status: '--status',
  agent: '--agent',
  since: '--since',
  until: '--until',
  limit: '--limit',
  cursor: '--cursor',
};

/**
 * Field errors as the user typed them: `payload.session_id must match …` becomes `--session must
 * match …`. The libraries name the fields of the wire contract, which the CLI's user never wrote.
 */
export function toFlagErrors(fields: readonly FieldError[]): string[] {
  return toFlagFields(fields).flatMap((f) => f.messages);
}

/** {@link toFlagErrors}, each field kept apart and named by its flag (`--json`'s `errors`). */
export function toFlagFields(fields: readonly FieldError[]): FieldError[] {
  return fields.map((f) => {
    const flag = FIELD_FLAGS[f.field] ?? f.field;
    const name = f.field.slice(f.field.lastIndexOf('.') + 1);
    return { field: flag, messages: f.messages.map((m) => (m.startsWith(`${name} `) ? `${flag}${m.slice(name.length)}` : `${flag}: ${m}`)) };
  });
}

function defaults(): Omit<CliArgs, 'command'> {
  return { positional: [], wait: false, requireAll: false, json: false, profiles: [] };
}
