import { natsPerFile, type FileNats } from '@ag2net/test-support';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import type { ServiceProcess } from './processes.js';

/** What a process-spanning test file shares: one nats-server, a connection to it, and the services it started. */
export interface FileStack {
  readonly url: string;
  readonly nc: NatsConnection;
  /** The file's nats-server: `nats.server.pause()`, `nats.restart(downMs)` for fault tests. */
  readonly nats: FileNats;
  /** Registers a service so that it is killed when the file's tests end; returns it. */
  track(service: ServiceProcess): ServiceProcess;
  /**
   * `count` client connections of their own (load generators), opened before the file's tests and closed after them;
   * `reconnectForever` keeps them reconnecting every 250 ms while a fault test keeps the server down. Call it at the top
   * level of the file.
   */
  clients(count: number, options?: { readonly reconnectForever?: boolean }): readonly NatsConnection[];
}

/** Starts a nats-server and a connection for the calling test file; kills tracked services after its tests. */
export function fileStack(): FileStack {
  const nats = natsPerFile();
  const services: ServiceProcess[] = [];
  let connection: NatsConnection | null = null;
  beforeAll(async () => {
    // Reconnects for as long as a fault test keeps the server down or frozen.
    connection = await connect({ servers: nats.url, maxReconnectAttempts: -1 });
  });
  afterAll(async () => {
    // A test that failed while the server was frozen must not leave the close below waiting on it.
    nats.server.resume();
    await Promise.all(services.splice(0).map((s) => s.stop('SIGKILL')));
    await connection?.close();
  });
  return {
    get url() {
      return nats.url;
    },
    nats,
    get nc() {
      if (connection === null) throw new Error('fileStack() must be called at the top level of a test file');
      return connection;
    },
    track(service) {
      services.push(service);
      return service;
    },
    clients(count, options = {}) {
      const opened: NatsConnection[] = [];
      const reconnect = options.reconnectForever === true ? { maxReconnectAttempts: -1, reconnectTimeWait: 250 } : {};
      beforeAll(async () => {
        for (let i = 0; i < count; i += 1) opened.push(await connect({ servers: nats.url, ...reconnect }));
      });
      afterAll(async () => {
        await Promise.all(opened.splice(0).map((nc) => nc.close()));
      });
      return opened;
    },
  };
}
