import { Command, CommanderError } from 'commander';
import { adminCommands } from './commands/admin.js';
import { agentsCommand } from './commands/agents.js';
import { auditCommand } from './commands/audit.js';
import { channelsCommand } from './commands/channels.js';
import { chatCommand } from './commands/chat.js';
import { exportCommand } from './commands/export.js';
import { healthCommand } from './commands/health.js';
import { hubsCommand } from './commands/hubs.js';
import { peopleCommand } from './commands/people.js';
import { tasksCommand } from './commands/tasks.js';
import { walCommands } from './commands/wal.js';
import { ExitCode, diagnose } from './exit.js';
import type { CliIo } from './io.js';
import { DEFAULT_SERVER, DEFAULT_TIMEOUT_MS } from './session.js';

/** The command's version (the workspace's). */
export const VERSION = '0.1.0';

const EXIT_CODES = `
Exit codes:
  0  ok
  1  error
  2  usage: a bad command, flag, argument or file (invalid_request, invalid_config)
  3  not found: no such agent, channel or task
  4  access denied: NATS or the hub refused the credentials or the caller
  5  hub unavailable: NATS unreachable, or no hub answered in time

Credentials: on a stack npm start runs, the command finds what it needs in .data/ below the working directory
(or beside --auth-dir): public reads and --operator's reads through the hub use .data/auth/operator-caller.creds,
--as <name> uses .data/creds/<server>/<prefix>/<name>.creds, chat the registrant's and the person's own;
tail and audit --follow need --creds .data/auth/admin.creds.

Environment: NATS_URL, NATS_CREDS, AG2NET_PREFIX, AG2NET_AUTH_DIR, AG2NET_CREDS_DIR (the flags win); NO_COLOR turns
colours off.`;

/** The `ag2net` program: global flags, every subcommand, output and exits routed through `io`. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('ag2net')
    .description(
      'Inspect and operate an ag2net hub: health, agents, channels, logs, audit, tasks, chat, people, credentials.',
    )
    .version(VERSION)
    .option('-s, --server <url>', `NATS server URL (env NATS_URL; default ${DEFAULT_SERVER})`)
    .option('-p, --prefix <prefix>', 'the hub prefix (env AG2NET_PREFIX; default ag2)')
    .option(
      '--creds <file>',
      '.creds file to connect with (env NATS_CREDS): an identity, or admin.creds for --operator',
    )
    .option(
      '--operator',
      "act as the operator: every channel, the full log, the audit trail (without --creds, through the stack's " +
        'operator-caller.creds; tail and audit --follow need admin.creds)',
    )
    .option(
      '--as <agent>',
      'act as this identity (name or id), with its own .creds where the server asks for credentials; with chat, the person',
    )
    .option('--auth-dir <dir>', "the stack's auth directory (env AG2NET_AUTH_DIR; default .data/auth)")
    .option(
      '--creds-dir <dir>',
      "where identities' <name>.creds are (env AG2NET_CREDS_DIR; default .data/creds/<server>/<prefix>)",
    )
    .option('--json', 'machine-readable output: one JSON document, or one JSON line per item with --follow')
    .option('--timeout <ms>', `how long to wait for NATS and the hub (default ${DEFAULT_TIMEOUT_MS})`)
    .addHelpText('after', EXIT_CODES)
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  healthCommand(program, io);
  hubsCommand(program, io);
  agentsCommand(program, io);
  channelsCommand(program, io);
  walCommands(program, io);
  exportCommand(program, io);
  auditCommand(program, io);
  tasksCommand(program, io);
  chatCommand(program, io);
  peopleCommand(program, io);
  adminCommands(program, io);
  return program;
}

/**
 * Runs the command line `argv` (without `node` and the script) and returns the exit code; never throws. Errors are
 * one line on standard error, with the fix on the next (`hint:`), or a JSON object there with `--json`.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.Ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other parse failure is bad usage (commander printed why).
      return err.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    }
    const d = diagnose(err);
    if (argv.includes('--json')) {
      io.err(`${JSON.stringify({ error: { exit_code: d.exitCode, message: d.message, hint: d.hint } })}\n`);
    } else {
      io.err(`ag2net: ${d.message}\n`);
      if (d.hint !== null) io.err(`hint: ${d.hint}\n`);
    }
    return d.exitCode;
  }
}
