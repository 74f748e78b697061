import { findNatsServer, startNatsServer, type NatsServer } from '@ag2net/test-support';
import { fileURLToPath } from 'node:url';
import { CURRENT_NATS_SERVER_VERSION, currentNatsServer } from '../../scripts/nats/current-server.js';

/** Where the default run installs the current nats-server release (gitignored, shared with later runs). */
const CURRENT_DIR = fileURLToPath(new URL('../../.cache/nats-server/', import.meta.url));

/**
 * The nats-server binaries a run measures, in order. `--servers` as given; else `NATS_SERVER_BIN` alone when set;
 * else the installed server (the floor the project supports) and the current release, installed once into
 * `.cache/nats-server/` — or the installed one alone, saying why, when the current release cannot be installed
 * (offline, an unpinned platform).
 */
export async function chooseServers(
  given: readonly string[] | undefined,
  log: (message: string) => void,
): Promise<readonly string[]> {
  if (given !== undefined) return given.map((bin) => findNatsServer({ NATS_SERVER_BIN: bin }));
  const installed = findNatsServer();
  if (process.env['NATS_SERVER_BIN']) return [installed];
  try {
    const current = await currentNatsServer(CURRENT_DIR);
    return current === installed ? [installed] : [installed, current];
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log(`nats-server ${CURRENT_NATS_SERVER_VERSION} could not be installed (${reason}); measuring ${installed} alone`);
    return [installed];
  }
}

/** Starts `binary` as the bench's nats-server (JetStream, file store, random port). */
export async function startServer(binary: string): Promise<NatsServer> {
  // test-support's launcher takes its binary from NATS_SERVER_BIN; the bench starts one server at a time, so it
  // sets the variable for the start and puts the previous value back.
  const previous = process.env['NATS_SERVER_BIN'];
  process.env['NATS_SERVER_BIN'] = binary;
  try {
    return await startNatsServer();
  } finally {
    if (previous === undefined) delete process.env['NATS_SERVER_BIN'];
    else process.env['NATS_SERVER_BIN'] = previous;
  }
}
