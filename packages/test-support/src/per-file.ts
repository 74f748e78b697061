import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import { startNatsServer, type NatsServer, type NatsServerOptions } from './server.js';

/** A nats-server that runs for the tests of one file; read `url` or `server` inside tests and hooks. */
export interface FileNats {
  readonly url: string;
  readonly server: NatsServer;
  /**
   * Crashes the server (SIGKILL), keeps it down for `downMs`, and starts it again on the same port and store dir;
   * `server` is the new process afterwards (and is the one stopped after the file's tests).
   */
  restart(downMs: number): Promise<void>;
}

/**
 * Starts a real nats-server before the tests of the calling file and stops it after them (vitest hooks). Call at
 * the top level of a test file: `const nats = natsPerFile();`, then `nats.url` in the tests.
 */
export function natsPerFile(options: NatsServerOptions = {}): FileNats {
  let server: NatsServer | null = null;
  const started = (): NatsServer => {
    if (server === null) throw new Error('nats-server is not running: natsPerFile() must be called at the top level');
    return server;
  };
  beforeAll(async () => {
    server = await startNatsServer(options);
  });
  afterAll(async () => {
    await server?.stop();
    server = null;
  });
  return {
    get url() {
      return started().url;
    },
    get server() {
      return started();
    },
    async restart(downMs) {
      const current = started();
      await current.kill();
      await sleep(downMs);
      server = await current.restart();
    },
  };
}
