export { ExitCodes, runCli, type CliIo } from './cli';
export { USAGE, parseCliArgs, type CliArgs } from './cli.args';
