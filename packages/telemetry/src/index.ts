/**
 * What the ag2net services share to be operated: the `/healthz`, `/readyz` and `/metrics` HTTP port, a
 * Prometheus registry, OpenTelemetry tracing configured by the standard `OTEL_*` variables, the crash policy, their
 * configuration from flags and environment, and files they re-read when they change (`reloadableFile`).
 *
 * @example
 * ```ts
 * import { createMetricsRegistry, startOpsServer, startTracing } from '@ag2net/telemetry';
 *
 * const tracing = startTracing({ serviceName: 'ag2net-hub' }); // null unless OTEL_* asks for traces
 * const registry = createMetricsRegistry();
 * await using ops = await startOpsServer({ port: 9464, registry, readiness: () => ({ ready: true, reason: 'serving' }) });
 * ```
 */
export { startOpsServer } from './ops-server.js';
export type { OpsLogger, OpsServer, OpsServerOptions, Readiness } from './ops-server.js';
export { LATENCY_BUCKETS_SECONDS, createMetricsRegistry } from './registry.js';
export { startTracing } from './tracing.js';
export type { Tracing, TracingOptions } from './tracing.js';
export { watchConnection } from './connection-watch.js';
export type { ConnectionWatch, WatchedConnection } from './connection-watch.js';
export { DEFAULT_CRASH_CLOSE_TIMEOUT_MS, installCrashPolicy } from './crash-policy.js';
export type { CrashLogger, CrashPolicyOptions } from './crash-policy.js';
export { ConfigError, describeConfigSource, readServiceConfig } from './service-config.js';
export type { ConfigSources, ServiceConfigSpec } from './service-config.js';
export { DEFAULT_RELOAD_DEBOUNCE_MS, reloadableFile } from './reloadable-file.js';
export type { FileReload, ReloadLogger, ReloadableFile, ReloadableFileOptions } from './reloadable-file.js';
