/**
 * The `ag2net` command as a library, for tests and embedding: `runCli(argv, io)` runs one command line and resolves
 * to its exit code.
 *
 * @example
 * ```ts
 * import { processIo, runCli } from 'ag2net';
 *
 * process.exitCode = await runCli(['channels', 'ls', '--operator', '--json'], processIo());
 * ```
 */
export { runCli, buildProgram, VERSION } from './program.js';
export { processIo } from './io.js';
export type { CliIo } from './io.js';
export { ExitCode, CliError, diagnose } from './exit.js';
export type { Diagnosis } from './exit.js';
