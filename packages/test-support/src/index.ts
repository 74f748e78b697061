/**
 * Test kit: a real nats-server per test file, a 3-node cluster for reliability tests, unique names and waiters; a
 * fake model endpoint and a turn report to build on, for the tests of agents' turns.
 *
 * @example
 * ```ts
 * import { startNatsServer, uniqueName } from '@ag2net/test-support';
 *
 * const nats = await startNatsServer(); // random port, temporary JetStream store
 * const prefix = uniqueName('hub');
 * // … connect to nats.url …
 * await nats.stop();
 * ```
 */
export { findNatsServer, NatsServerUnavailableError } from './binary.js';
export { startNatsServer } from './server.js';
export type { NatsServer, NatsServerOptions } from './server.js';
export { startNatsCluster } from './cluster.js';
export type { NatsCluster } from './cluster.js';
export { uniqueName } from './names.js';
export { waitFor, within } from './wait.js';
export type { WaitOptions } from './wait.js';
export { natsPerFile } from './per-file.js';
export { pauseFor, pauseProcess, resumeProcess } from './signals.js';
export type { FileNats } from './per-file.js';
export {
  startSecuredNatsServer,
  startSecuredNatsCluster,
  connectWithCreds,
  type SecuredNatsServerOptions,
} from './secured.js';
export { ViolationRecorder } from './violations.js';
export type { Violation } from './violations.js';
export { closedPort, startModelEndpoint } from './model-endpoint.js';
export type { ModelEndpoint, ModelEndpointOptions } from './model-endpoint.js';
export { turnReportFixture } from './turn-report.js';
