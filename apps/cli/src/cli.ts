import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { Bus, ChorusClient, isStreamMissing, readDeadLetters, type BusOptions, IdempotencyKeyExpiredError, IdempotencyKeyReusedError, NatsUnreachableError, NoRespondersError, RemoteError, RequestTimeoutError, RetryRefusedError, type RetryStarted } from '@chorus/bus';
import { busOptionsFor, parseChorusConfig, type ChorusConfig } from '@chorus/config';
import { DEFAULT_TENANT, EnvelopeErrorCodes, InvalidEnvelopeError, isTerminalStatus, type WorkflowStatus, type WorkflowView } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { parseCliArgs, toFlagErrors, toFlagFields, UsageError, USAGE, type CliArgs } from './cli.args';
import { commandUsage } from './cli.commands';
import { CliErrorTypes, reportFailure, type Failure } from './cli.failure';
import { renderDeadLetters, renderHistory, renderList, renderWorkflow } from './cli.render';
import { watch } from './cli.watch';

export interface CliIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Rewrites a live status line when stdout is a terminal. */
  live?: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

/** The shortest deadline a query may have, as over HTTP. */
const MIN_DEADLINE_MS = 100;

export const ExitCodes = Object.freeze({ Ok: 0, WorkflowNotCompleted: 1, Usage: 2, Unreachable: 3 });

/** Runs one CLI command; returns the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // The benchmark has options of its own; it starts its own servers and needs no running Chorus.
  if (argv[0] === 'bench') return runBenchmark(argv.slice(1), io);
  let args: CliArgs;
  try {
    args = parseCliArgs(argv);
  } catch (e) {
    const showUsage = !(e instanceof UsageError) || e.showUsage;
    const command = e instanceof UsageError ? e.command : undefined;
    const hint = command ? `(chorus ${command} --help shows its options)` : '(chorus --help shows every command and option)';
    // The command line did not parse, but a --json on it still asks for a JSON error.
    const end = argv.indexOf('--');
    const json = (end < 0 ? argv : argv.slice(0, end)).includes('--json');
    const message = (e as Error).message;
    const errors = e instanceof UsageError && e.errors.length > 0 ? e.errors : undefined;
    return reportFailure(io, json, { exitCode: ExitCodes.Usage, error_type: CliErrorTypes.Usage, message, errors, hint: showUsage ? `\n${command ? commandUsage(command) : USAGE}` : hint });
  }
  if (args.command === 'help') {
    io.stdout(args.helpFor ? commandUsage(args.helpFor) : USAGE);
    return ExitCodes.Ok;
  }
  const fail = (f: Failure) => reportFailure(io, args.json, f);
  let config: ChorusConfig;
  let busOptions: BusOptions;
  try {
    config = parseChorusConfig({ ...io.env, ...(args.nats ? { NATS_URL: args.nats } : {}) }, io.cwd);
    busOptions = busOptionsFor(config, 'cli');
  } catch (e) {
    // A ConfigError names every bad variable (or a credentials file without a cli user); an address
    // given with --nats is named by that flag, which the user typed, not by NATS_URL, which it sets.
    const message = args.nats ? (e as Error).message.replaceAll('NATS_URL: ', '--nats: ') : (e as Error).message;
    return fail({ exitCode: ExitCodes.Usage, error_type: codeOf(e), message });
  }
  const log = createRootLogger({ name: 'cli', level: 'silent' });
  let bus: Bus | undefined;
  try {
    bus = await Bus.connect(busOptions, log);
    await bus.jsm.streams.info(config.bus.workflowStream);
  } catch (e) {
    // A server without Chorus's streams answers: close the connection, or it keeps the process alive.
    await bus?.close().catch(() => undefined);
    const refused = authorizationFailure(e);
    if (refused) {
      // Chorus may well be running: retrying will not help, the credentials are a setting to fix.
      const message = `NATS at ${config.bus.servers.join(', ')} refused the CLI's credentials (${refused}); ${describeNatsUser(config, busOptions)}`;
      return fail({ exitCode: ExitCodes.Usage, error_type: CliErrorTypes.CredentialsRefused, message, hint: CREDENTIALS_HINT });
    }
    if (isStreamMissing(e)) {
      // NATS answers, but Chorus never ran against it: "cannot reach" would send the user looking at the network.
      const message = `NATS at ${config.bus.servers.join(', ')} answers, but has no ${config.bus.workflowStream} stream: Chorus has not run against this server`;
      return fail({ exitCode: ExitCodes.Unreachable, error_type: CliErrorTypes.Unreachable, message, hint: 'Start it with: npm start, or point --nats (NATS_URL) at the server Chorus uses' });
    }
    // The CLI has its own hint (npm start), and names the address once: only the client's word from NatsUnreachableError.
    const why = e instanceof NatsUnreachableError ? e.reason : (e as Error).message;
    const message = `cannot reach Chorus at ${config.bus.servers.join(', ')}: ${why}`;
    return fail({ exitCode: ExitCodes.Unreachable, error_type: CliErrorTypes.Unreachable, message, hint: 'Is it running? Start it with: npm start' });
  }
  const client = new ChorusClient(bus, {
    agent: 'cli',
    correlation: config.correlation,
    defaultDeadlineMs: config.workflow.defaultDeadlineMs,
    defaultTopK: config.workflow.defaultTopK,
    requestTimeoutMs: config.bus.requestTimeoutMs,
    terminalGraceMs: config.workflow.terminalGraceMs,
  });
  try {
    return await execute(args, client, io, fail, bus, { graceMs: config.workflow.watchGraceMs, maxDeadlineMs: config.workflow.maxDeadlineMs });
  } catch (e) {
    return fail(failureOf(e));
  } finally {
    await bus.close();
  }
}

/** What a command that threw reports, and its exit code. */
function failureOf(e: unknown): Failure {
  if (e instanceof InvalidEnvelopeError) {
    const lines = toFlagErrors(e.errors);
    return { exitCode: ExitCodes.Usage, error_type: e.code, message: 'invalid query', text: `invalid query:\n${lines.map((line) => `  ${line}`).join('\n')}`, errors: toFlagFields(e.errors) };
  }
  if (e instanceof IdempotencyKeyReusedError) {
    // As HTTP's 422: the key, and what differs.
    return { exitCode: ExitCodes.Usage, error_type: e.code, message: e.message, errors: [{ field: '--idempotency-key', messages: [`used before for a request whose ${e.differing}`] }] };
  }
  if (e instanceof IdempotencyKeyExpiredError) {
    // As HTTP's 409: the key's workflow ended and has left the ledger; a new key starts a new one.
    return { exitCode: ExitCodes.Usage, error_type: e.code, message: e.message, status: e.status };
  }
  if (e instanceof RemoteError && e.code === EnvelopeErrorCodes.BadRequest) {
    // The hub refused what was asked (an invalid id, status, tenant or cursor).
    return { exitCode: ExitCodes.Usage, error_type: e.code, message: e.fields ? toFlagErrors(e.fields).join('; ') : e.message, ...(e.fields ? { errors: toFlagFields(e.fields) } : {}) };
  }
  if (e instanceof NoRespondersError || e instanceof RequestTimeoutError) {
    return { exitCode: ExitCodes.Unreachable, error_type: e.code, message: `the hub is not answering (${e.message}). Is Chorus running?` };
  }
  return { exitCode: ExitCodes.Unreachable, error_type: codeOf(e), message: (e as Error).message };
}

/** An error's own code (a ChorusError's, a ConfigError's), else {@link CliErrorTypes.Failed}. */
function codeOf(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? code : CliErrorTypes.Failed;
}

async function execute(args: CliArgs, client: ChorusClient, io: CliIo, fail: (f: Failure) => number, bus: Bus, timing: { graceMs: number; maxDeadlineMs: number }): Promise<number> {
  const print = (value: unknown, text: () => string) => io.stdout(args.json ? JSON.stringify(value, null, 2) : text());
  const tenant = args.tenant ?? DEFAULT_TENANT;
  /** For a hint's command: without it, `chorus status <id>` would not find another tenant's workflow. */
  const tenantFlag = args.tenant ? ` --tenant ${args.tenant}` : '';
  // A workflow submitted a moment ago may not be recorded by the hub yet (see ChorusClient.find).
  const accepted = { acceptedWithinMs: timing.maxDeadlineMs + 60_000 };
  /** A waited-for workflow: printed when it ended; when the hub did not confirm an end, says so (exit 3). */
  const printEnded = (id: string, workflow: WorkflowView | null): number => {
    if (!workflow) {
      const message = `${id} was accepted, but the hub has not confirmed how it ended (it is not answering)`;
      return fail({ exitCode: ExitCodes.Unreachable, error_type: CliErrorTypes.EndNotConfirmed, message, hint: `ask again with: chorus status ${id}${tenantFlag}` });
    }
    print(workflow, () => renderWorkflow(workflow));
    if (!isTerminalStatus(workflow.status)) {
      io.stderr(`chorus: the hub has not confirmed the end of ${workflow.correlation_id} (still ${workflow.status} after its deadline); ask again with: chorus status ${workflow.correlation_id}${tenantFlag}`);
      return ExitCodes.Unreachable;
    }
    return exitFor(workflow);
  };
  switch (args.command) {
    case 'query': {
      if (args.deadlineMs !== undefined && (args.deadlineMs < MIN_DEADLINE_MS || args.deadlineMs > timing.maxDeadlineMs)) {
        const message = `--deadline-ms must be from ${MIN_DEADLINE_MS} to ${timing.maxDeadlineMs} (CHORUS_MAX_DEADLINE_MS)`;
        return fail({ exitCode: ExitCodes.Usage, error_type: CliErrorTypes.Usage, message, errors: [{ field: '--deadline-ms', messages: [message] }] });
      }
      const request = {
        query: args.positional[0],
        tenant_id: tenant,
        session_id: args.session,
        profiles: args.profiles.length > 0 ? args.profiles : undefined,
        top_k: args.topK,
        deadline_ms: args.deadlineMs,
        require_all: args.requireAll,
      };
      // Without --wait, stdout is the id alone (ID=$(chorus query …)), or with --json its JSON; what
      // to do next goes to stderr. With --wait --json, stdout is one JSON document, the workflow (its
      // correlation_id included); the id goes to stderr first, so it is known even if the wait ends
      // badly. A submission that names a workflow already there (the same idempotency key, or the
      // session strategy's same request) starts nothing: said as such, not as "submitted".
      const onSubmitted = (s: { correlation_id: string; duplicate: boolean }) => {
        const line = `correlation_id: ${s.correlation_id}${s.duplicate ? ' (submitted before: this is that workflow, nothing new started)' : ''}`;
        if (!args.wait) io.stdout(args.json ? JSON.stringify({ correlation_id: s.correlation_id, duplicate: s.duplicate }) : s.correlation_id);
        else if (args.json) io.stderr(line);
        else io.stdout(line);
      };
      const options = { idempotencyKey: args.idempotencyKey, onSubmitted };
      if (!args.wait) {
        const s = await client.submit(request, options);
        const what = s.duplicate ? 'already submitted (this is that workflow, nothing new started)' : 'submitted';
        if (!args.json) io.stderr(`${what}; follow it with: chorus status ${s.correlation_id}${tenantFlag}`);
        return ExitCodes.Ok;
      }
      const { submitted, workflow } = await client.submitAndWait(request, options);
      return printEnded(submitted.correlation_id, workflow);
    }
    case 'status': {
      const workflow = await client.find(args.positional[0], tenant, accepted);
      if (!workflow) return notFound(fail, args.positional[0], tenant);
      print(workflow, () => renderWorkflow(workflow));
      return isTerminalStatus(workflow.status) ? exitFor(workflow) : ExitCodes.Ok;
    }
    case 'history': {
      if (!(await client.find(args.positional[0], tenant, accepted))) return notFound(fail, args.positional[0], tenant);
      const history = await client.history(args.positional[0], tenant);
      if (!history) return notFound(fail, args.positional[0], tenant);
      print(history, () => renderHistory(history));
      return ExitCodes.Ok;
    }
    case 'watch': {
      const workflow = await client.find(args.positional[0], tenant, accepted);
      if (!workflow) return notFound(fail, args.positional[0], tenant);
      const finished = await watch(bus, client, workflow, { stdout: io.stdout, live: args.json ? undefined : io.live }, args.json, timing.graceMs);
      return finished ? exitFor(finished) : ExitCodes.WorkflowNotCompleted;
    }
    case 'list': {
      const list = await client.list({
        tenant_id: tenant,
        status: args.status as WorkflowStatus | undefined,
        agent: args.agent,
        since: args.since,
        until: args.until,
        limit: args.limit,
        cursor: args.cursor,
      });
      print(list, () => renderList(list));
      return ExitCodes.Ok;
    }
    case 'dead-letters': {
      // Only a tenant asked for narrows them: an operator sees every tenant's (the CLI reads the bus as its NATS user).
      const letters = await readDeadLetters(bus, { limit: args.limit ?? 20, tenantId: args.tenant });
      print(letters, () => renderDeadLetters(letters));
      return ExitCodes.Ok;
    }
    case 'cancel': {
      const workflow = await client.find(args.positional[0], tenant, accepted);
      if (!workflow) return notFound(fail, args.positional[0], tenant);
      if (isTerminalStatus(workflow.status)) {
        const message = `workflow ${workflow.correlation_id} already finished (${workflow.status}); nothing to cancel`;
        return fail({ exitCode: ExitCodes.WorkflowNotCompleted, error_type: CliErrorTypes.AlreadyFinished, message, status: workflow.status });
      }
      await client.cancel(workflow, 'cancelled from the CLI');
      io.stdout(`cancel requested for ${workflow.correlation_id}`);
      return ExitCodes.Ok;
    }
    case 'retry': {
      const workflow = await client.find(args.positional[0], tenant, accepted);
      if (!workflow) return notFound(fail, args.positional[0], tenant);
      const announce = (started: RetryStarted) => {
        const line = `correlation_id: ${started.correlation_id}\nretry of ${started.retry_of}${started.duplicate ? ' (retried before; this is that retry)' : ''}`;
        // (With --wait.) As for query: with --json, stdout is one JSON document, the retry's workflow.
        if (args.json) io.stderr(`correlation_id: ${started.correlation_id}`);
        else io.stdout(line);
      };
      try {
        if (!args.wait) {
          // As for query: stdout is the retry's id alone (RETRY=$(chorus retry …)), or its JSON; the rest to stderr.
          const started = await client.retry(workflow, 'retried from the CLI');
          if (args.json) {
            io.stdout(JSON.stringify(started));
          } else {
            io.stdout(started.correlation_id);
            const before = started.duplicate ? ' (retried before; this is that retry)' : '';
            io.stderr(`retry of ${started.retry_of}${before}; follow it with: chorus status ${started.correlation_id}${tenantFlag}`);
          }
          return ExitCodes.Ok;
        }
        const { started, workflow: retried } = await client.retryAndWait(workflow, 'retried from the CLI');
        announce(started);
        return printEnded(started.correlation_id, retried);
      } catch (e) {
        if (!(e instanceof RetryRefusedError)) throw e;
        return fail({ exitCode: ExitCodes.WorkflowNotCompleted, error_type: e.code, message: e.message, status: workflow.status });
      }
    }
    default:
      io.stdout(USAGE);
      return ExitCodes.Ok;
  }
}

function exitFor(workflow: WorkflowView): number {
  return workflow.status === 'completed' ? ExitCodes.Ok : ExitCodes.WorkflowNotCompleted;
}

/** Not found in the tenant the CLI reads (`default` unless --tenant): it may be another tenant's. */
function notFound(fail: (f: Failure) => number, id: string, tenant: string): number {
  return fail({ exitCode: ExitCodes.WorkflowNotCompleted, error_type: CliErrorTypes.NotFound, message: `no workflow ${id} in tenant ${tenant} (another tenant's? use --tenant T)` });
}

const CREDENTIALS_HINT =
  'Give the CLI a NATS user: CHORUS_NATS_CREDENTIALS=<file> (it connects as the file\'s "cli" user; infra/nats/dev-credentials.json for the development server), or NATS_USER and NATS_PASS, or NATS_TOKEN.';

/**
 * The server's word when it refused who the CLI connected as (nats.js's AuthorizationError or
 * UserAuthenticationExpiredError, which the bus keeps as the cause); undefined for any other failure.
 */
function authorizationFailure(e: unknown): string | undefined {
  for (let c = e; c instanceof Error; c = c.cause) {
    if (c.name === 'AuthorizationError' || c.name === 'UserAuthenticationExpiredError') return c.message;
  }
  return undefined;
}

/** Who the CLI connected as, and from which setting, so the one to fix is named. */
function describeNatsUser(config: ChorusConfig, options: BusOptions): string {
  // nats.js does not read credentials from the URL: say so, or nats://user:pass@host looks ignored for no reason.
  const inUrl = config.bus.servers.some((s) => /^[a-z]+:\/\/[^/]*@/i.test(s)) ? ' (a user in the NATS URL is not used)' : '';
  if (config.credentials) return `it connected as ${options.user}, the "cli" user of CHORUS_NATS_CREDENTIALS${inUrl}.`;
  if (options.user) return `it connected as ${options.user} (NATS_USER)${inUrl}.`;
  if (options.token) return `it connected with the token in NATS_TOKEN${inUrl}.`;
  return `it connected without credentials: none of CHORUS_NATS_CREDENTIALS, NATS_USER or NATS_TOKEN is set${inUrl}.`;
}

/** The benchmark script compiled beside the CLI (`dist/scripts/bench/bench.js`). */
const BENCH_SCRIPT = join(__dirname, '..', '..', '..', 'scripts', 'bench', 'bench.js');

/** `chorus bench [options]`: `npm run bench` without the build step; its output goes straight to this terminal. */
async function runBenchmark(argv: string[], io: CliIo): Promise<number> {
  if (!existsSync(BENCH_SCRIPT)) {
    io.stderr(`chorus: the benchmark is not built (${BENCH_SCRIPT} is missing); run npm run build in the Chorus checkout`);
    return ExitCodes.Usage;
  }
  // CHORUS_BENCH_COMMAND: its usage and its record of the run then name `chorus bench`, the command typed.
  const env = { ...process.env, ...io.env, CHORUS_BENCH_COMMAND: 'chorus bench' };
  const child = spawn(process.execPath, [BENCH_SCRIPT, ...argv], { stdio: 'inherit', env, cwd: io.cwd });
  return new Promise<number>((resolve) => {
    child.on('error', (e) => {
      io.stderr(`chorus: the benchmark could not start: ${e.message}`);
      resolve(ExitCodes.Usage);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1)));
  });
}
