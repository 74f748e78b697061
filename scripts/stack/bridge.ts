import { DEFAULT_BRIDGE_PORT, personSeed } from '@ag2net/bridge';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { randomApiKey, readKeys, writeKeys } from './auth.js';
import { DEMO_PERSON } from './demo.js';
import { startStackService, type StackService } from './services.js';

/**
 * The bridge's people file (`--api-keys`): who may sign in to the console. The demo's person, with the key the hub admits
 * it with, and whoever `ag2net people add` admitted.
 */
export const BRIDGE_PEOPLE_FILE = 'bridge-people.json';
/** The secret the bridge derives tokens and people's keys from (`--secret`), kept between runs. */
export const BRIDGE_SECRET_FILE = 'bridge-secret';
/** The operator's sign-in key (`--operator-key`): sign in as `$operator` with it. */
export const OPERATOR_KEY_FILE = 'operator-key';
/**
 * The web console's URL (`http://127.0.0.1:<port>/`), written while the bridge runs and removed when it stops:
 * `ag2net people add` reads it for the sign-in link of this stack's console, whichever port it took.
 */
export const CONSOLE_URL_FILE = 'console-url';
/** Where an `--insecure` stack keeps the bridge's files (`.data/bridge/`): it lays out no auth directory. */
export const INSECURE_BRIDGE_DIR = 'bridge';

/** The bridge's files and what they hold. */
export interface BridgeFiles {
  readonly peopleFile: string;
  readonly secretFile: string;
  readonly operatorKeyFile: string;
  /** Where the running bridge's console URL goes (`startStackBridge` writes it). */
  readonly consoleUrlFile: string;
  /** The demo person's sign-in key. */
  readonly personKey: string;
  /** The nkey seed the bridge derives for the demo's person: the demo registers the person with it. */
  readonly personSeed: string;
}

/**
 * Lays out the bridge's files in `dir` (the auth directory; `.data/bridge/` on an insecure stack), owner-only (0600):
 * the people file with the demo person's key (`personKey`, the key the hub admits it with; on an insecure stack a
 * random one, kept in the file after), and a secret and an operator key, random the first time and kept after, so the
 * person keeps one nkey and the operator one key across runs. The people file keeps everyone else in it (those
 * `ag2net people add` admitted): only the demo person's entry is set, and the file is rewritten in one step, only
 * when that changes it.
 */
export async function prepareBridgeFiles(options: {
  readonly dir: string;
  /** The person's API key on a secured stack; `null`: the people file keeps one of its own. */
  readonly personKey: string | null;
}): Promise<BridgeFiles> {
  const { dir } = options;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const peopleFile = join(dir, BRIDGE_PEOPLE_FILE);
  const people = await readKeys(peopleFile);
  const personKey = options.personKey ?? people[DEMO_PERSON] ?? randomApiKey();
  if (people[DEMO_PERSON] === personKey) await chmod(peopleFile, 0o600);
  else await writeKeys(peopleFile, { ...people, [DEMO_PERSON]: personKey });
  const secretFile = join(dir, BRIDGE_SECRET_FILE);
  // The bridge reads the secret as text (trimmed, at least 32 bytes): 32 random bytes, base64url.
  const secret = await keptRandom(secretFile, () => randomBytes(32).toString('base64url'));
  const operatorKeyFile = join(dir, OPERATOR_KEY_FILE);
  await keptRandom(operatorKeyFile, () => randomBytes(24).toString('base64url'));
  return {
    peopleFile,
    secretFile,
    operatorKeyFile,
    consoleUrlFile: join(dir, CONSOLE_URL_FILE),
    personKey,
    personSeed: personSeed(new TextEncoder().encode(secret), DEMO_PERSON),
  };
}

/** The file's trimmed text, or a fresh value written there (0600) when it does not exist. */
async function keptRandom(path: string, fresh: () => string): Promise<string> {
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw err;
  });
  if (text !== null && text.trim() !== '') {
    await chmod(path, 0o600);
    return text.trim();
  }
  const value = fresh();
  await writeOwnerOnly(path, `${value}\n`);
  return value;
}

async function writeOwnerOnly(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** True when nothing listens on `port` of 127.0.0.1. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A port nothing listens on now, chosen by the system. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The running bridge of the local stack. */
export interface StackBridge {
  readonly service: StackService;
  /** `http://127.0.0.1:<port>/`: the web console. */
  readonly url: string;
  /** The console's sign-in link for the demo's person (the key in the URL's fragment, never sent to a server). */
  readonly signInUrl: string;
  /** Whether another process held 8787, so the bridge took a free port. */
  readonly movedFrom: number | null;
}

/**
 * Starts the bridge on 127.0.0.1:8787, or on a free port when 8787 is taken (or is taken between the probe and the
 * bridge's listen), and resolves once it answers `GET /healthz`, its URL written to `files.consoleUrlFile` (removed
 * when the service stops). `authDir` `null`: an unsecured hub.
 */
export async function startStackBridge(options: {
  readonly root: string;
  readonly logDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly authDir: string | null;
  readonly files: BridgeFiles;
  readonly readyWithinMs?: number;
}): Promise<StackBridge> {
  const { files } = options;
  let port = (await portIsFree(DEFAULT_BRIDGE_PORT)) ? DEFAULT_BRIDGE_PORT : await freePort();
  for (;;) {
    const service = await startStackService({
      root: options.root,
      logDir: options.logDir,
      name: 'bridge',
      entry: 'bridge/src/main.ts',
      args: [
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        ...(options.authDir === null ? [] : ['--auth-dir', options.authDir]),
        '--api-keys',
        files.peopleFile,
        '--secret',
        files.secretFile,
        '--operator-key',
        files.operatorKeyFile,
      ],
      env: options.env,
    });
    const url = `http://127.0.0.1:${port}/`;
    const ready = await answersHealthz(url, service, options.readyWithinMs ?? 60_000);
    if (ready) {
      const signIn = `${url}#/signin?name=${encodeURIComponent(DEMO_PERSON)}&key=${encodeURIComponent(files.personKey)}`;
      return {
        service: await recordConsoleUrl(service, { file: files.consoleUrlFile, url }),
        url,
        signInUrl: signIn,
        movedFrom: port === DEFAULT_BRIDGE_PORT ? null : DEFAULT_BRIDGE_PORT,
      };
    }
    await service.stop();
    // 8787 was taken after the probe (another stack starting at the same moment): once more on a free port.
    if (port === DEFAULT_BRIDGE_PORT && !(await portIsFree(DEFAULT_BRIDGE_PORT))) {
      port = await freePort();
      continue;
    }
    throw new Error(`the bridge did not start on port ${port}; see ${service.logFile}`);
  }
}

/**
 * Writes the console's `url` to `file` (`CONSOLE_URL_FILE`) and answers the bridge's service with a `stop` that removes
 * the file once the bridge exited, so that the file names a console only while one runs there.
 */
export async function recordConsoleUrl(
  service: StackService,
  record: { readonly file: string; readonly url: string },
): Promise<StackService> {
  await writeFile(record.file, `${record.url}\n`);
  return {
    ...service,
    async stop(graceMs?: number) {
      await service.stop(graceMs);
      await rm(record.file, { force: true });
    },
  };
}

/**
 * Resolves true once this bridge process logged that it listens and `GET /healthz` answers 200 (another process on the
 * same port would answer too, so its own log line decides whose port it is); false when it exits or the time is up.
 */
async function answersHealthz(url: string, service: StackService, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  let exited = false;
  let listening = false;
  let seen = '';
  void service.exited.then(() => (exited = true));
  service.child.stdout?.on('data', (chunk: Buffer) => {
    if (listening) return;
    seen = (seen + chunk.toString()).slice(-4096);
    listening = seen.includes('"msg":"bridge listening"');
  });
  while (!exited && Date.now() < deadline) {
    const ok =
      listening &&
      (await fetch(new URL('healthz', url), { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      ));
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}
