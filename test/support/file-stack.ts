import { natsPerFile } from '@ag2net/test-support';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import type { ServiceProcess } from './processes.js';

/** What a process-spanning test file shares: one nats-server, a connection to it, and the services it started. */
export interface FileStack {
  readonly url: string;
  readonly nc: NatsConnection;
  /** Registers a service so that it is killed when the file's tests end; returns it. */
  track(service: ServiceProcess): ServiceProcess;
}

/** Starts a nats-server and a connection for the calling test file; kills tracked services after its tests. */
export function fileStack(): FileStack {
  const nats = natsPerFile();
  const services: ServiceProcess[] = [];
  let connection: NatsConnection | null = null;
  beforeAll(async () => {
    connection = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop('SIGKILL')));
    await connection?.close();
  });
  return {
    get url() {
      return nats.url;
    },
    get nc() {
      if (connection === null) throw new Error('fileStack() must be called at the top level of a test file');
      return connection;
    },
    track(service) {
      services.push(service);
      return service;
    },
  };
}
