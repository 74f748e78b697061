import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Thrown when no nats-server binary can be found; the message says how to get one. */
export class NatsServerUnavailableError extends Error {
  override readonly name = 'NatsServerUnavailableError';
}

/**
 * The nats-server binary: `$NATS_SERVER_BIN` when set, else the first `nats-server` on `PATH`.
 * Throws `NatsServerUnavailableError` with install instructions when there is none.
 */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['NATS_SERVER_BIN'];
  if (explicit !== undefined && explicit !== '') {
    if (isExecutable(explicit)) return explicit;
    throw new NatsServerUnavailableError(`NATS_SERVER_BIN=${explicit} is not an executable file`);
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'nats-server');
    if (isExecutable(candidate)) return candidate;
  }
  throw new NatsServerUnavailableError(
    'nats-server was not found on PATH. Install it (Debian/Ubuntu: `sudo apt-get install -y nats-server`, ' +
      'version 2.9.10 or newer) or point NATS_SERVER_BIN at the binary. No Docker daemon is needed.',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
