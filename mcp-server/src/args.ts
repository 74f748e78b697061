import { parseArgs } from 'node:util';
import { isLogLevel, type LogLevel } from './log.js';

export const USAGE = `usage: ag2net-mcp --creds FILE [--servers URL[,URL…]] [--prefix P] [--log-level L]
       ag2net-mcp --name NAME [--servers URL] [--prefix P]      (a hub without auth)

Serves one identity of the ag2net network over MCP on standard input and output: a model host (an IDE, a desktop
assistant, a coding agent) then says, delegates, reads its inbox and its channels' transcripts as that identity.
  --creds      the identity's .creds file: an agent's or a person's, as the SDK keeps them (npm start: .data/creds/…)
               or \`ag2net creds issue --agent NAME --out FILE\` writes them; renewed credentials are written back
               (env AG2NET_CREDS)
  --name       on a hub without auth only: the identity's name, registered as an agent when new (env AG2NET_NAME)
  --servers    NATS server URL(s), comma-separated (env NATS_URL; default nats://127.0.0.1:4222)
  --prefix     the hub's prefix (env AG2NET_PREFIX; default ag2)
  --log-level  debug, info, warn, error or silent; logs go to standard error (env LOG_LEVEL; default warn)`;

/** What the command line and the environment say. */
export interface McpArgs {
  readonly credsPath?: string;
  readonly name?: string;
  readonly servers: string[];
  readonly prefix: string;
  readonly logLevel: LogLevel;
}

/** The outcome of reading the command line: the settings, help asked for, or a usage error to print. */
export type ParsedArgs =
  | { readonly kind: 'run'; readonly args: McpArgs }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** Reads the flags, falling back to the environment for each. */
export function parseMcpArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedArgs {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      allowPositionals: false,
      options: {
        creds: { type: 'string' },
        name: { type: 'string' },
        servers: { type: 'string' },
        prefix: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  if (values.help === true) return { kind: 'help' };
  const pick = (flag: string | undefined, name: string): string | undefined =>
    [flag, env[name]].find((v): v is string => v !== undefined && v !== '');
  const credsPath = pick(values.creds, 'AG2NET_CREDS');
  const name = pick(values.name, 'AG2NET_NAME');
  if (credsPath === undefined && name === undefined) {
    return { kind: 'error', message: 'pass --creds <identity .creds file> (or --name <name> on a hub without auth)' };
  }
  const logLevel = pick(values['log-level'], 'LOG_LEVEL') ?? 'warn';
  if (!isLogLevel(logLevel))
    return { kind: 'error', message: `--log-level must be debug, info, warn, error or silent` };
  const servers = (pick(values.servers, 'NATS_URL') ?? 'nats://127.0.0.1:4222').split(',').filter((s) => s !== '');
  return {
    kind: 'run',
    args: {
      ...(credsPath === undefined ? {} : { credsPath }),
      ...(credsPath !== undefined || name === undefined ? {} : { name }),
      servers,
      prefix: pick(values.prefix, 'AG2NET_PREFIX') ?? 'ag2',
      logLevel,
    },
  };
}
