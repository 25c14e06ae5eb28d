import { runCli } from './cli';

// A reader that stops reading (`chorus watch <id> | head -1`) closes the pipe: its choice, not a
// failure, so the command ends quietly instead of dying of an unhandled EPIPE. A closed stderr
// only loses the messages: the command goes on to its own exit code.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(0);
});
process.stderr.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
});

/** `chorus …`: the command-line client, on the bus. */
runCli(process.argv.slice(2), {
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
  live: process.stdout.isTTY ? (text) => process.stdout.write(`\r\x1b[2K${text}`) : undefined,
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
