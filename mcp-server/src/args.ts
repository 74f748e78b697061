import { parseArgs } from 'node:util';
import { isLogLevel, type LogLevel } from './log.js';

export const USAGE = `usage: ag2net-mcp --creds FILE [--servers URL[,URL…]] [--prefix P] [--log-level L]
       ag2net-mcp --creds REGISTRANT.creds --name NAME --creds-dir DIR [--api-key KEY | --api-keys FILE] […]
       ag2net-mcp --name NAME […]                                 (a hub without auth)

Serves one identity of the ag2net network over MCP on standard input and output: a model host (an IDE, a desktop
assistant, a coding agent) then says, delegates, reads its inbox and its channels' transcripts as that identity.
  --creds      an identity's .creds file (an agent's or a person's, as the SDK keeps them in npm start's
               .data/creds/<server>/<prefix>/, or as \`ag2net creds issue --out\` writes them; renewed credentials are
               written back), or the registrant's (.data/auth/registrant.creds) with --name (env AG2NET_CREDS)
  --name       the identity to act as when --creds is not an identity's: attached with its credentials in
               --creds-dir, or registered as an agent when new (env AG2NET_NAME)
  --creds-dir  where the identity's credentials are kept as <name>.creds (0600) and found again
               (env AG2NET_CREDS_DIR)
  --api-key    the admission key sent when --name registers (env AG2NET_API_KEY)
  --api-keys   a JSON file of API keys by name (hub-service's --api-keys file): --name's key (env AG2NET_API_KEYS)
  --servers    NATS server URL(s), comma-separated (env NATS_URL; default nats://127.0.0.1:4222)
  --prefix     the hub's prefix (env AG2NET_PREFIX; default ag2)
  --log-level  debug, info, warn, error or silent; logs go to standard error (env LOG_LEVEL; default warn)`;

/** What the command line and the environment say. */
export interface McpArgs {
  readonly credsPath?: string;
  readonly name?: string;
  readonly credsDir?: string;
  readonly apiKey?: string;
  /** A JSON file of API keys by name; `--api-key` wins. */
  readonly apiKeysFile?: string;
  readonly servers: string[];
  readonly prefix: string;
  readonly logLevel: LogLevel;
}

/** The outcome of reading the command line: the settings, help asked for, or a usage error to print. */
export type ParsedArgs =
  | { readonly kind: 'run'; readonly args: McpArgs }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

const FLAGS = {
  creds: 'AG2NET_CREDS',
  name: 'AG2NET_NAME',
  'creds-dir': 'AG2NET_CREDS_DIR',
  'api-key': 'AG2NET_API_KEY',
  'api-keys': 'AG2NET_API_KEYS',
  servers: 'NATS_URL',
  prefix: 'AG2NET_PREFIX',
  'log-level': 'LOG_LEVEL',
} as const;
type Flag = keyof typeof FLAGS;

/** Reads the flags, falling back to the environment for each. */
export function parseMcpArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedArgs {
  let values: Partial<Record<Flag, string>> & { help?: boolean };
  try {
    values = parseArgs({
      args: [...argv],
      allowPositionals: false,
      options: {
        creds: { type: 'string' },
        name: { type: 'string' },
        'creds-dir': { type: 'string' },
        'api-key': { type: 'string' },
        'api-keys': { type: 'string' },
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
  const pick = (flag: Flag): string | undefined =>
    [values[flag], env[FLAGS[flag]]].find((v): v is string => v !== undefined && v !== '');
  const credsPath = pick('creds');
  const name = pick('name');
  if (credsPath === undefined && name === undefined) {
    return { kind: 'error', message: "pass --creds <identity .creds file> (or the registrant's with --name <name>)" };
  }
  const logLevel = pick('log-level') ?? 'warn';
  if (!isLogLevel(logLevel))
    return { kind: 'error', message: `--log-level must be debug, info, warn, error or silent` };
  const servers = (pick('servers') ?? 'nats://127.0.0.1:4222').split(',').filter((s) => s !== '');
  const optional = {
    credsPath,
    name,
    credsDir: pick('creds-dir'),
    apiKey: pick('api-key'),
    apiKeysFile: pick('api-keys'),
  };
  return {
    kind: 'run',
    args: {
      ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
      servers,
      prefix: pick('prefix') ?? 'ag2',
      logLevel,
    },
  };
}
