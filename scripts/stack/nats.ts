import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { findNatsServer, NatsServerUnavailableError, startNatsServer, type NatsServer } from '@ag2net/test-support';

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

/** Starts a local nats-server with JetStream, its data in `dataDir` (kept between runs). */
export async function startLocalNats(dataDir: string, say: (line: string) => void): Promise<NatsServer> {
  ensureNatsServerBinary(say);
  await mkdir(dataDir, { recursive: true });
  return startNatsServer({ storeDir: dataDir, name: 'ag2net-local' });
}
