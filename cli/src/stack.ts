import { AuthFile, credsServerKey } from '@ag2net/auth';
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

/** The auth directory `npm start` lays out, below the directory it runs in. */
export const DEFAULT_AUTH_DIR = join('.data', 'auth');
/** hub-service's API keys file in the auth directory (`--api-keys`): every identity's admission key, by name. */
export const API_KEYS_FILE = 'api-keys.json';
/** The bridge's people file in the auth directory (`--api-keys` of the bridge): who may sign in to the console. */
export const BRIDGE_PEOPLE_FILE = 'bridge-people.json';
/** The bridge's secret in the auth directory (`--secret` of the bridge): people's keys derive from it. */
export const BRIDGE_SECRET_FILE = 'bridge-secret';
/** The URL of the web console in the auth directory, written by `npm start` while its bridge runs. */
export const CONSOLE_URL_FILE = 'console-url';
/** Where identities' credentials are kept when no `.data/` is found, below the home directory. */
const HOME_CREDS_DIR = join('.ag2net', 'creds');
/** The port `npm start`'s nats-server takes when it is free; its data (and credentials) are then under `nats`. */
const LOCAL_NATS_PORT = 4222;

/**
 * Where a stack `npm start` runs keeps its files, as the command finds them: the auth directory (`--auth-dir`,
 * `AG2NET_AUTH_DIR`, else `.data/auth` below the working directory) and, beside it, `creds/<server>/<prefix>/` with
 * each identity's `<name>.creds`.
 */
export class StackFiles {
  /** The auth directory, absolute. */
  readonly authDir: string;
  /** The directory above the auth directory (`.data`), where `creds/` is. */
  readonly dataDir: string;

  constructor(
    readonly cwd: string,
    authDir: string | undefined,
  ) {
    this.authDir = resolve(cwd, authDir ?? DEFAULT_AUTH_DIR);
    this.dataDir = dirname(this.authDir);
  }

  /** A file of the auth directory. */
  auth(file: string): string {
    return join(this.authDir, file);
  }

  get operatorCallerCreds(): string {
    return this.auth(AuthFile.operatorCallerCreds);
  }

  get registrantCreds(): string {
    return this.auth(AuthFile.registrantCreds);
  }

  get adminCreds(): string {
    return this.auth(AuthFile.adminCreds);
  }

  /** A path as messages show it: relative to the working directory when it is below it. */
  shown(path: string): string {
    const rel = relative(this.cwd, path);
    return rel === '' || rel.startsWith('..') ? path : rel;
  }

  /** Whether `creds/` is beside the auth directory: a stack `npm start` laid out is here. */
  hasCredsDir(): Promise<boolean> {
    return isDirectory(join(this.dataDir, 'creds'));
  }

  /**
   * The directory of an identity's `<name>.creds` for the server `servers` and `prefix`: `<data>/creds/<server>/<prefix>`
   * as `npm start` lays it out, where `<server>` is the first of these that fits:
   * - `url_<host>_<port>` (`credsServerKey`), when that directory exists: a stack on a server someone else runs;
   * - `nats` for port 4222 on this machine: the server `npm start` starts when 4222 is free;
   * - `nats-alt` for another port on this machine, when it exists: the server `npm start` starts when 4222 is taken;
   * - `url_<host>_<port>` otherwise.
   * Without a `<data>/creds` directory, the same below `~/.ag2net/creds`.
   */
  async identityCredsDir(servers: string, prefix: string): Promise<string> {
    const root = (await this.hasCredsDir()) ? join(this.dataDir, 'creds') : join(homedir(), HOME_CREDS_DIR);
    const byUrl = credsServerKey(servers);
    const local = localPort(servers);
    let server = byUrl;
    if (await isDirectory(join(root, byUrl))) return join(root, byUrl, prefix);
    if (local === LOCAL_NATS_PORT) server = 'nats';
    else if (local !== null && (await isDirectory(join(root, 'nats-alt')))) server = 'nats-alt';
    return join(root, server, prefix);
  }
}

/** The `<server>` directory name of a server someone else runs, as `npm start` writes it: its URL(s) as a name. */
export { credsServerKey };

/** The port of a single server URL on this machine (`127.0.0.1`, `localhost`, `::1`), else `null`. */
function localPort(servers: string): number | null {
  if (servers.includes(',')) return null;
  let url: URL;
  try {
    url = new URL(servers.includes('://') ? servers : `nats://${servers}`);
  } catch {
    return null;
  }
  if (!['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(url.hostname)) return null;
  return url.port === '' ? LOCAL_NATS_PORT : Number(url.port);
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** Whether a file exists (and is a file). */
export async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** `<dir>/<name>.creds`: an identity's credentials file in a credentials directory, named as the runner names it. */
export function identityCredsFile(dir: string, name: string): string {
  return join(dir, `${encodeURIComponent(name)}.creds`);
}
