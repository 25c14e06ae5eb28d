import { endQuietlyWhenOutputCloses } from '@chorus/bus';
import { runCli } from './cli';

// `chorus watch <id> | head -1` ends quietly once head has its line.
endQuietlyWhenOutputCloses();

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
