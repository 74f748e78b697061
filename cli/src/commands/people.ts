import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { actionOn, needsSubcommand, type CommandEnv } from '../env.js';
import { usageError } from '../exit.js';
import type { CliIo } from '../io.js';
import { readApiKeysFile, writeApiKeysFile } from '../keys-file.js';
import { API_KEYS_FILE, BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, CONSOLE_URL_FILE, isFile } from '../stack.js';

/** The agent of `npm start`'s demo that answers anything: the example of a chat. */
const DEMO_AGENT = 'pal';

/** How long to wait for a console to answer its `/healthz`, in ms. */
const CONSOLE_PROBE_MS = 1000;

const ConsoleUrl = z.url({ protocol: /^https?$/ });

const AddOptions = z.object({
  dir: z.string().min(1).optional(),
  console: ConsoleUrl.optional(),
});

/** What a person's name may be: a passport's, and never the operator's `$operator`. */
const PersonName = z
  .string()
  .min(1)
  .max(128)
  .refine((n) => !n.startsWith('$'), 'a name starting with $ is reserved');

/**
 * `ag2net people add <name>`: admits a person on a stack `npm start` runs. A random API key for the name goes into the
 * auth directory's `api-keys.json` (the hub's, which hub-service re-reads when it changes) and `bridge-people.json`
 * (the console's, which the bridge re-reads too), so that the person can chat from the terminal and sign in to the
 * console at once, in either order, as one identity (`chat` derives the key the console does); a name that has a key
 * keeps it. Prints how to do both: the chat command and the sign-in link of the console `npm start` runs (`--console`
 * names another).
 */
export function peopleCommand(program: Command, io: CliIo): void {
  const people = needsSubcommand(
    program.command('people').description("people of a stack npm start runs (the auth directory's API keys)"),
    'use `ag2net people add <name>` to admit a person',
  );
  people
    .command('add')
    .description('admit a person: an API key for the name in api-keys.json and bridge-people.json, then how to chat')
    .argument('<name>', "the person's name")
    .option('--dir <dir>', 'the auth directory (default --auth-dir, AG2NET_AUTH_DIR or .data/auth)')
    .option(
      '--console <url>',
      `the web console, for the sign-in link (default: the one npm start runs, named in the auth directory's ${CONSOLE_URL_FILE}, when it answers)`,
    )
    .action(actionOn(io, AddOptions, addPerson));
}

async function addPerson(env: CommandEnv, rawName: string, opts: z.output<typeof AddOptions>): Promise<void> {
  const name = PersonName.parse(rawName);
  const target = await env.target();
  const { stack } = target;
  const dir = opts.dir === undefined ? stack.authDir : resolve(stack.cwd, opts.dir);
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    throw usageError(
      `there is no auth directory ${stack.shown(dir)}`,
      "run `npm start` first (it lays out .data/auth), or pass --dir <the stack's auth directory>",
    );
  }
  const keysFile = join(dir, API_KEYS_FILE);
  const peopleFile = join(dir, BRIDGE_PEOPLE_FILE);
  const keys = (await readApiKeysFile(keysFile)) ?? {};
  const had = keys[name];
  const key = had ?? randomBytes(24).toString('base64url');
  if (had === undefined) await writeApiKeysFile(keysFile, { ...keys, [name]: key });
  // The console signs the person in with the key the hub admits it with: the same key in both files.
  const people = (await readApiKeysFile(peopleFile)) ?? {};
  if (people[name] !== key) await writeApiKeysFile(peopleFile, { ...people, [name]: key });
  const consoleUrl = opts.console ?? (await runningConsole(join(dir, CONSOLE_URL_FILE)));
  const signIn =
    consoleUrl === null
      ? null
      : `${consoleUrl.endsWith('/') ? consoleUrl : `${consoleUrl}/`}#/signin?name=${encodeURIComponent(name)}` +
        `&key=${encodeURIComponent(key)}`;
  const chat = `ag2net chat <agent> --as ${name}`;
  if (env.out.json) {
    return env.out.data({
      name,
      added: had === undefined,
      api_keys_file: keysFile,
      people_file: peopleFile,
      chat,
      sign_in_url: signIn,
    });
  }
  const o = env.out;
  o.line(
    had === undefined
      ? `admitted ${o.paint('accent', name)}: a new API key in ${stack.shown(keysFile)} and ${stack.shown(peopleFile)}`
      : `${o.paint('accent', name)} was admitted already; its key is in ${stack.shown(keysFile)} and ${stack.shown(peopleFile)}`,
  );
  o.fields([
    ['chat', `${chat}   (e.g. ag2net chat ${DEMO_AGENT} --as ${name})`],
    [
      'console',
      signIn ??
        `sign in as ${name} with the key in ${stack.shown(peopleFile)} at the console npm start printed ` +
          '(or pass --console <its url> for a link)',
    ],
  ]);
  if (await isFile(join(dir, BRIDGE_SECRET_FILE))) {
    o.line(o.paint('dim', `either way, in either order, ${name} is one person: the same identity and channels`));
  }
}

/**
 * The web console `npm start` runs for this auth directory: the URL its bridge wrote to `file` (removed when it stops),
 * when a console answers its `/healthz` there now; else `null`.
 */
async function runningConsole(file: string): Promise<string | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  const url = ConsoleUrl.safeParse(text?.trim());
  return url.success ? answeringConsole(url.data) : null;
}

/** `url` when a web console answers its `/healthz` there now, else `null`. */
async function answeringConsole(url: string): Promise<string | null> {
  try {
    const response = await fetch(new URL('healthz', url), { signal: AbortSignal.timeout(CONSOLE_PROBE_MS) });
    return response.ok ? url : null;
  } catch {
    return null;
  }
}
