import { DEFAULT_PREFIX, partitionRuns, type Health } from '@ag2net/protocol';
import { join } from 'node:path';
import type { StackAuth } from './auth.js';
import { DEMO_PERSON } from './demo.js';

/** The identities README.md's SDK example registers: `npm start` gives them API keys too, so the example runs as is. */
export const README_IDENTITIES = ['scholar', 'me'] as const;

/** The identities the Python client's quick start (clients/python/README.md) registers: they get API keys too. */
export const PYTHON_QUICK_START_IDENTITIES = ['echo-py', 'py-user'] as const;

/** The command that runs README.md's SDK example against the running stack. */
export const README_EXAMPLE_COMMAND = 'node --conditions=@ag2net/source --import tsx test/fixtures/readme/sdk.ts';

/** The demo agent `npm start` suggests chatting with: the conversation's cheerful companion, who answers anything. */
export const CHAT_AGENT = 'pal';

/** The server the `ag2net` command connects to without `--server` or `NATS_URL`. */
const CLI_DEFAULT_SERVER = 'nats://127.0.0.1:4222';

/** Options of `printNextSteps`. */
export interface NextStepsOptions {
  readonly say: (line: string) => void;
  readonly natsUrl: string;
  readonly prefix: string;
  /** The stack's credentials, `null` on an insecure stack; `shown` shortens a path for display. */
  readonly auth:
    | (Pick<StackAuth, 'dir' | 'adminCreds' | 'registrantCreds' | 'apiKeysFile' | 'clientApiKeysFile' | 'credsDir'> & {
        readonly shown: (path: string) => string;
      })
    | null;
  /** The web console: its URL, the demo person's sign-in link, and the operator key's file as shown. */
  readonly console: { readonly url: string; readonly signInUrl: string; readonly operatorKeyFile: string };
  /** The hubs of the prefix as the roster answered (`ag2net hubs`), sorted by id; none: the lines are left out. */
  readonly hubs: readonly Health[];
}

/** The lines that say where the web console is and how to sign in to it. */
function printConsole(say: (line: string) => void, web: NextStepsOptions['console']): void {
  say('the web console (docs/bridge.md):');
  say(`  console         ${web.url}`);
  say(`  sign in as you  ${web.signInUrl}`);
  say(`  operator key    ${web.operatorKeyFile}  (sign in as $operator with it: every channel, the audit trail)`);
}

/**
 * The lines that show the `ag2net` command on the stack: it finds the credentials in `.data/` itself (from the
 * directory `npm start` runs in), so only a server, prefix or auth directory other than its defaults are named.
 */
function printCommand(say: (line: string) => void, options: NextStepsOptions): void {
  const { auth } = options;
  const ag2net = ag2netCommand(options);
  const rows: [string, string][] = [
    [`${ag2net} --operator channels`, 'every channel, as the operator (agents, wal <channel>, audit, …: --help)'],
    [`${ag2net} --operator hubs`, 'the hubs, the partitions each serves, and the delivery lag'],
    [
      `${ag2net} chat ${CHAT_AGENT} --as ${DEMO_PERSON}`,
      `talk to ${CHAT_AGENT} as ${DEMO_PERSON}: a line is a message`,
    ],
  ];
  if (auth !== null) {
    rows.push([`${ag2net} people add <name>`, 'admit a person: an API key, how to chat and the console sign-in link']);
  }
  const width = Math.max(...rows.map(([command]) => command.length));
  say('the ag2net command, from this directory (docs/operations.md):');
  for (const [command, what] of rows) say(`  ${command.padEnd(width)}  ${what}`);
}

/** `npx ag2net` with the flags the command needs on this stack. */
function ag2netCommand(options: NextStepsOptions): string {
  const { natsUrl, prefix, auth } = options;
  const flags = [
    ...(natsUrl === CLI_DEFAULT_SERVER ? [] : [`--server ${natsUrl}`]),
    ...(prefix === DEFAULT_PREFIX ? [] : [`--prefix ${prefix}`]),
    ...(auth === null || auth.shown(auth.dir) === join('.data', 'auth') ? [] : [`--auth-dir ${auth.dir}`]),
  ];
  return ['npx ag2net', ...flags].join(' ');
}

/**
 * The lines that say which hub serves what: with several partitions the partitions each holds, with one which hub is
 * active and which stands by.
 */
function printHubs(say: (line: string) => void, hubs: readonly Health[]): void {
  const partitions = hubs[0]?.partitions;
  if (partitions === undefined) return;
  const width = Math.max(...hubs.map((h) => h.hub_id.length));
  if (partitions === 1) {
    say('the hubs: one partition, so one serves and the others stand by (docs/hub-service.md):');
    for (const h of hubs) say(`  ${h.hub_id.padEnd(width)}  ${h.role}`);
    return;
  }
  say(`the hubs, each serving a share of the ${partitions} partitions (docs/hub-service.md, "Running N hubs"):`);
  for (const h of hubs) {
    const held = h.held.map((p) => p.partition);
    say(
      `  ${h.hub_id.padEnd(width)}  ${held.length === 0 ? 'no partition (standby)' : `partitions ${partitionRuns(held).join(', ')}`}`,
    );
  }
}

/**
 * What `npm start` prints once the demo ran and the stack keeps running: where the stack is, the web console and how
 * to sign in to it, the `ag2net` command on it, which hub serves which partitions, where its credentials and API keys
 * are, and the two lines that run README.md's SDK example against it. The `export` line names absolute paths, so it works from any directory.
 */
export function printNextSteps(options: NextStepsOptions): void {
  const { say, natsUrl, prefix, auth } = options;
  const prefixVar = prefix === DEFAULT_PREFIX ? '' : ` AG2NET_PREFIX=${prefix}`;
  if (auth === null) {
    say(`\nthe stack keeps running at ${natsUrl} (prefix ${prefix}), without authentication; press Ctrl-C to stop.`);
    printConsole(say, options.console);
    printCommand(say, options);
    printHubs(say, options.hubs);
    say('next, in another terminal, run the SDK example of README.md against it:');
    say(`  export NATS_URL=${natsUrl}${prefixVar}`);
    say(`  ${README_EXAMPLE_COMMAND}`);
    return;
  }
  const { shown } = auth;
  say(`\nthe stack keeps running at ${natsUrl} (prefix ${prefix}); press Ctrl-C to stop.`);
  printConsole(say, options.console);
  printCommand(say, options);
  printHubs(say, options.hubs);
  say('every connection needs credentials (docs/security.md):');
  say(`  NATS URL        ${natsUrl}`);
  say(`  operator        ${shown(auth.adminCreds)}  (reads everything; e.g. nats --creds <it> stream ls)`);
  say(`  registrant      ${shown(auth.registrantCreds)}  (may only register identities and attach to them)`);
  say(`  API keys        ${shown(auth.apiKeysFile)}  (every identity's admission key, by name: the hub's)`);
  say(
    `  your keys       ${shown(auth.clientApiKeysFile)}  (the keys of README's and the Python quick start's identities)`,
  );
  say(`  identity creds  ${shown(auth.credsDir)}/  (issued by the hub to the demo's agents and person)`);
  say('next, in another terminal, run the SDK example of README.md against it:');
  say(
    `  export NATS_URL=${natsUrl}${prefixVar} NATS_CREDS=${auth.registrantCreds} ` +
      `AG2NET_API_KEYS=${auth.clientApiKeysFile} AG2NET_CREDS_DIR=${auth.credsDir}`,
  );
  say(`  ${README_EXAMPLE_COMMAND}`);
}
