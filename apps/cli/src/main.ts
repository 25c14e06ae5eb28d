import { endQuietlyWhenOutputCloses } from '@chorus/bus';
import { runCli } from './cli';
import { forTerminal } from './terminal-text';

// `chorus watch <id> | head -1` ends quietly once head has its line.
endQuietlyWhenOutputCloses();

/** `chorus …`: the command-line client, on the bus. Nothing it prints can drive the terminal (`forTerminal`). */
runCli(process.argv.slice(2), {
  stdout: (line) => console.log(forTerminal(line)),
  stderr: (line) => console.error(forTerminal(line)),
  live: process.stdout.isTTY ? (text) => process.stdout.write(`\r\x1b[2K${forTerminal(text)}`) : undefined,
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
