import { parseArgs } from 'node:util';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE, TIME_FILTER_RULE, isTimeFilter, type FieldError } from '@chorus/envelope';
import { COMMAND_NAMES, globalUsage, type CommandName } from './cli.commands';

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
  ) {
    super(message);
  }
}

function isCommand(name: string | undefined): name is CommandName {
  return (COMMAND_NAMES as readonly (string | undefined)[]).includes(name);
}

export function parseCliArgs(argv: string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        wait: { type: 'boolean', default: false },
        'require-all': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        profile: { type: 'string', multiple: true },
        'top-k': { type: 'string' },
        'deadline-ms': { type: 'string' },
        tenant: { type: 'string' },
        session: { type: 'string' },
        'idempotency-key': { type: 'string' },
        status: { type: 'string' },
        agent: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        nats: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...positional] = positionals;
  if (values.help) return { ...defaults(), command: 'help', helpFor: isCommand(command) ? command : undefined };
  if (command === undefined) throw new UsageError('missing command');
  if (command === 'help') return { ...defaults(), command: 'help', helpFor: isCommand(positional[0]) ? positional[0] : undefined };
  if (!isCommand(command)) throw new UsageError(`unknown command: ${command}`);
  const needsOne = ['query', 'status', 'history', 'watch', 'cancel', 'retry'].includes(command);
  if (needsOne && positional.length !== 1) {
    throw new UsageError(command === 'query' ? 'query needs exactly one argument: the query text, in quotes' : `${command} needs exactly one argument: a correlation id`);
  }
  // Every bad value at once, so one correction fixes them all.
  const problems: string[] = [];
  const args: CliArgs = {
    command,
    positional,
    wait: values.wait ?? false,
    requireAll: values['require-all'] ?? false,
    json: values.json ?? false,
    profiles: values.profile ?? [],
    topK: int('--top-k', values['top-k'], problems),
    deadlineMs: int('--deadline-ms', values['deadline-ms'], problems),
    tenant: values.tenant,
    session: values.session,
    idempotencyKey: idempotencyKey(values['idempotency-key'], problems),
    status: values.status,
    agent: values.agent,
    since: timeFilter('--since', values.since, problems),
    until: timeFilter('--until', values.until, problems),
    limit: int('--limit', values.limit, problems),
    cursor: values.cursor,
    nats: values.nats,
  };
  if (problems.length === 1) throw new UsageError(problems[0], false);
  if (problems.length > 1) throw new UsageError(`invalid options:\n${problems.map((p) => `  ${p}`).join('\n')}`, false);
  return args;
}

/** The same rule as HTTP's Idempotency-Key: a key the ingress would refuse is refused here too. */
function idempotencyKey(value: string | undefined, problems: string[]): string | undefined {
  if (value !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(value)) problems.push(`--idempotency-key ${IDEMPOTENCY_KEY_RULE}`);
  return value;
}

/**
 * The HTTP API's rule for `since`/`until`: the hub reads anything Date.parse does, so
 * `2026-12-01 15:00` would pass as local time there.
 */
function timeFilter(name: string, value: string | undefined, problems: string[]): string | undefined {
  if (value !== undefined && !isTimeFilter(value)) problems.push(`${name} must be ${TIME_FILTER_RULE}`);
  return value;
}

function int(name: string, value: string | undefined, problems: string[]): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) problems.push(`${name} must be a positive integer`);
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
  return fields.flatMap((f) => {
    const flag = FIELD_FLAGS[f.field] ?? f.field;
    const name = f.field.slice(f.field.lastIndexOf('.') + 1);
    return f.messages.map((m) => (m.startsWith(`${name} `) ? `${flag}${m.slice(name.length)}` : `${flag}: ${m}`));
  });
}

function defaults(): Omit<CliArgs, 'command'> {
  return { positional: [], wait: false, requireAll: false, json: false, profiles: [] };
}
