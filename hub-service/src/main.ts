#!/usr/bin/env node
import { HUB_RECONNECT_WAIT_MS, startHub, type Hub } from '@ag2net/hub';
import { Ag2netError, ErrorCode } from '@ag2net/protocol';
import { installCrashPolicy } from '@ag2net/telemetry';
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { ConfigError, USAGE, loadConfig, operatorLimits, type HubServiceConfig } from './config.js';
import { watchHoldings } from './holdings.js';
import { loadHubAuth, type HubAuth } from './hub-auth.js';
import { startOps } from './ops.js';

async function main(): Promise<number> {
  let config: HubServiceConfig | 'help';
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (config === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let auth: HubAuth | null;
  try {
    auth = await loadHubAuth(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = pino({ name: 'hub-service', level: config.logLevel });
  // Installed before anything can fail: a crash closes the hub (releasing the lease) and exits non-zero, instead of
  // dying while it holds the lease and making the standbys wait for it to expire.
  const held: { hub?: Hub; nc?: NatsConnection } = {};
  // Tracing, metrics and the HTTP port come first: `/healthz` answers and `/readyz` says why not yet while starting.
  const ops = await startOps({ config, log, held });
  installCrashPolicy({
    log,
    close: async () => {
      await held.hub?.close();
      await held.nc?.close();
      await ops.close();
    },
  });
  const nc = await connect({ ...(await connectionOptions(config)), ...auth?.connection });
  held.nc = nc;
  ops.connected(nc);
  log.info({ server: nc.getServer(), prefix: config.prefix }, 'connected to NATS');
  if (auth === null)
    log.warn({}, 'no --auth-dir: the hub issues no credentials (NATS must secure the subjects itself)');
  else if (auth.admission === 'none') {
    log.warn({}, 'issuing credentials, but no --api-keys nor --open-registration: every registration is refused');
  } else {
    const keys = auth.apiKeys === null ? {} : { keys: auth.apiKeys.size, file: auth.apiKeys.path };
    log.info({ admission: auth.admission, ...keys }, 'issuing identity credentials');
  }
  // A name added to the API keys file is admitted from its next registration on, without a restart.
  const watchingKeys = auth?.apiKeys?.watch(log) ?? null;
  let hub: Hub;
  try {
    hub = await startHub({
      connection: nc,
      prefix: config.prefix,
      ...(config.hubId === undefined ? {} : { hubId: config.hubId }),
      logger: log,
      leaseTtlMs: config.leaseTtlMs,
      inviteAckTimeoutMs: config.inviteAckTimeoutMs,
      sweepIntervalMs: config.sweepIntervalMs,
      retainClosedMs: config.retainClosedMs ?? null,
      inboxAckWaitMs: config.inboxAckWaitMs,
      replicas: config.replicas,
      partitions: config.partitions,
      limits: operatorLimits(config),
      awaitActive: false,
      observer: ops.observer,
      ...auth?.hub,
    });
  } catch (err) {
    // A partition count other than the prefix's (`PartitionCountError`) is the operator's to fix, like any other
    // invalid setting.
    if (!(err instanceof Ag2netError) || err.code !== ErrorCode.InvalidConfig || err.name !== 'PartitionCountError') {
      throw err;
    }
    process.stderr.write(`invalid configuration:\n  --partitions (AG2NET_PARTITIONS): ${err.message}\n`);
    watchingKeys?.[Symbol.dispose]();
    await nc.close();
    await ops.close();
    return 2;
  }
  held.hub = hub;
  if (config.partitions === 1) log.info({ hubId: hub.hubId }, 'started; competing for the lease');
  else
    log.info({ hubId: hub.hubId, partitions: config.partitions }, 'started; competing for its share of the partitions');
  const holdings = watchHoldings({ hub, log });

  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) {
        log.warn({ signal }, 'second signal; exiting now');
        resolve(1);
        return;
      }
      stopping = true;
      ops.stopping();
      log.info({ signal }, 'stopping: no new admissions, draining, releasing the lease');
      watchingKeys?.[Symbol.dispose]();
      holdings.stop();
      void hub
        .close()
        .then(() => nc.drain())
        .then(() => ops.close())
        .then(() => {
          log.info({}, 'stopped');
          resolve(0);
        })
        .catch((err: unknown) => {
          log.error({ err }, 'shutdown failed');
          resolve(1);
        });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    // The hub ends by itself only when it can no longer work (its NATS connection closed for good): exit non-zero so
    // a supervisor restarts the process, instead of living on without serving.
    void hub.closed().then((result) => {
      if (stopping || !(result instanceof Error)) return;
      stopping = true;
      ops.stopping();
      holdings.stop();
      log.error({ err: result }, 'hub stopped by itself; exiting');
      void ops.close().finally(() => resolve(1));
    });
  });
}

async function connectionOptions(config: HubServiceConfig): Promise<ConnectionOptions> {
  const options: ConnectionOptions = {
    servers: config.natsUrl.split(','),
    name: `ag2net-hub${config.hubId === undefined ? '' : `-${config.hubId}`}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: HUB_RECONNECT_WAIT_MS,
    // Async stack traces cost an Error with a stack per request; the hub makes several per admitted envelope.
    noAsyncTraces: true,
  };
  if (config.creds !== undefined) {
    options.authenticator = credsAuthenticator(await readFile(config.creds));
  }
  if (config.user !== undefined) options.user = config.user;
  if (config.password !== undefined) options.pass = config.password;
  if (config.token !== undefined) options.token = config.token;
  return options;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`hub-service failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
