#!/usr/bin/env node
import { HubClient, type AgentClient } from '@ag2net/client';
import { installCrashPolicy } from '@ag2net/telemetry';
import { mkdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { z } from 'zod';
import { createCancellations } from './a2a/cancellations.js';
import { loadRunnerConfig, RunnerConfigError } from './config.js';
import { hostAgent } from './host.js';
import { startRunnerOps } from './ops.js';

const USAGE = `usage: ag2net-runner <config.yaml|config.json> [--nats-url URL] [--prefix P] [--creds FILE] [--creds-dir DIR]
                     [--api-key KEY] [--api-keys FILE] [--log-level L] [--turn-lock-ttl-ms MS] [--http-port N]
                     [--model-timeout-ms MS]

Hosts the agents declared in the config file on the hub. Start several runners with the same file to share the
work: each delivery is handled by one of them, and turns of one channel never run at once.
  --nats-url   NATS server URL(s), comma-separated (env NATS_URL; default nats://127.0.0.1:4222)
  --prefix     the hub's prefix (env AG2NET_PREFIX; else the file's prefix; default ag2)
  --creds      the runner's own NATS credentials, a .creds file: the registrant's, or an identity's
               (env AG2NET_CREDS; default none: a NATS server without auth)
  --creds-dir  where each hosted agent's issued credentials are kept as <name>.creds (mode 0600) and found again
               on restart; replicas of one agent share it (env AG2NET_CREDS_DIR; default none: a secured hub then
               cannot attach an agent registered by an earlier run)
  --api-key    the admission credential sent as the passport's auth block (scheme api_key) of every hosted agent
               whose config has no auth block of its own (env AG2NET_API_KEY)
  --api-keys   a JSON file of API keys by agent name ({ "expert": "…" }), hub-service's --api-keys file: an agent
               without an auth block of its own sends the key of its name, before --api-key (env AG2NET_API_KEYS)
  --log-level  pino level (env LOG_LEVEL; default info)
  --turn-lock-ttl-ms  how long a crashed replica's turn stays locked (env AG2NET_TURN_LOCK_TTL_MS; default 6000)
  --http-port  serve /healthz, /readyz and /metrics on this port, 0 for a free one (env AG2NET_HTTP_PORT; default none)
  --model-timeout-ms  how long one model call may take before the turn fails with model_timeout, for agents without
               timeout_ms of their own (env AG2NET_LLM_TIMEOUT_MS; default 30000)`;

/** `--api-keys`: API keys by agent name, as hub-service's `--api-keys` file holds them. */
const ApiKeysFileSchema = z.record(z.string(), z.string().min(1));

type Flag =
  | 'nats-url'
  | 'prefix'
  | 'log-level'
  | 'turn-lock-ttl-ms'
  | 'creds'
  | 'creds-dir'
  | 'api-key'
  | 'api-keys'
  | 'http-port'
  | 'model-timeout-ms';

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        'nats-url': { type: 'string' },
        prefix: { type: 'string' },
        'log-level': { type: 'string' },
        'turn-lock-ttl-ms': { type: 'string' },
        creds: { type: 'string' },
        'creds-dir': { type: 'string' },
        'api-key': { type: 'string' },
        'api-keys': { type: 'string' },
        'http-port': { type: 'string' },
        'model-timeout-ms': { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.values.help === true || args.positionals.length !== 1) {
    process.stdout.write(`${USAGE}\n`);
    return args.values.help === true ? 0 : 2;
  }
  const configPath = args.positionals[0] ?? '';
  let loaded;
  try {
    loaded = await loadRunnerConfig(configPath);
  } catch (err) {
    if (err instanceof RunnerConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const { config, baseDir } = loaded;
  const setting = (flag: Flag, env: string): string | undefined =>
    [args.values[flag], process.env[env]].find((v): v is string => typeof v === 'string' && v !== '');
  const log = pino({ name: 'agent-runner', level: setting('log-level', 'LOG_LEVEL') ?? 'info' });
  const servers = (setting('nats-url', 'NATS_URL') ?? 'nats://127.0.0.1:4222').split(',');
  const prefix = setting('prefix', 'AG2NET_PREFIX') ?? config.prefix ?? 'ag2';
  const lockTtl = setting('turn-lock-ttl-ms', 'AG2NET_TURN_LOCK_TTL_MS');
  const turnLockTtlMs = lockTtl === undefined ? undefined : Number(lockTtl);
  if (
    turnLockTtlMs !== undefined &&
    (!Number.isInteger(turnLockTtlMs) || turnLockTtlMs < 1000 || turnLockTtlMs > 120_000)
  ) {
    process.stderr.write(`--turn-lock-ttl-ms must be a whole number of ms from 1000 to 120000; got ${lockTtl}\n`);
    return 2;
  }
  const modelTimeout = setting('model-timeout-ms', 'AG2NET_LLM_TIMEOUT_MS');
  const modelTimeoutMs = modelTimeout === undefined ? undefined : Number(modelTimeout);
  if (
    modelTimeoutMs !== undefined &&
    (!Number.isInteger(modelTimeoutMs) || modelTimeoutMs < 100 || modelTimeoutMs > 3_600_000)
  ) {
    process.stderr.write(`--model-timeout-ms must be a whole number of ms from 100 to 3600000; got ${modelTimeout}\n`);
    return 2;
  }
  const creds = setting('creds', 'AG2NET_CREDS');
  const credsDir = setting('creds-dir', 'AG2NET_CREDS_DIR');
  const apiKey = setting('api-key', 'AG2NET_API_KEY');
  const apiKeysFile = setting('api-keys', 'AG2NET_API_KEYS');
  const apiKeys =
    apiKeysFile === undefined ? undefined : ApiKeysFileSchema.parse(JSON.parse(await readFile(apiKeysFile, 'utf8')));
  if (credsDir !== undefined) await mkdir(credsDir, { recursive: true, mode: 0o700 });
  const httpPort = setting('http-port', 'AG2NET_HTTP_PORT');
  if (httpPort !== undefined && !/^\d{1,5}$/.test(httpPort)) {
    process.stderr.write(`--http-port must be a port number; got ${httpPort}\n`);
    return 2;
  }
  const ops = await startRunnerOps({ port: httpPort === undefined ? undefined : Number(httpPort), log });
  // A crash closes the hub client (its agents' connections and turn locks) within a time bound and exits non-zero.
  const held: { hub?: HubClient } = {};
  installCrashPolicy({
    log,
    close: async () => {
      await held.hub?.close();
      await ops.close();
    },
  });
  const hub = await HubClient.connect({ servers, prefix, logger: log, ...(creds === undefined ? {} : { creds }) });
  held.hub = hub;
  const clients: AgentClient[] = [];
  // Remote agents' CancelTask requests of turns aborted at shutdown: sent before the runner exits.
  const cancellations = createCancellations();
  try {
    for (const agentConfig of config.agents) {
      const hosted = await hostAgent(hub, agentConfig, {
        baseDir,
        env: process.env,
        ...(modelTimeoutMs === undefined ? {} : { modelTimeoutMs }),
        ...(turnLockTtlMs === undefined ? {} : { turnLockTtlMs }),
        ...(credsDir === undefined ? {} : { credsDir }),
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(apiKeys === undefined ? {} : { apiKeys }),
        observer: ops.observer,
        onTask: (agent, taskId) => log.debug({ agent, taskId }, 'remote agent task started'),
        onCancelFailed: (agent, err) => log.warn({ agent, err }, 'cancelling the remote agent task failed'),
        cancellations,
      });
      const { client, model, registeredAs } = hosted;
      clients.push(client);
      log.info(
        {
          agent: agentConfig.name,
          agentId: client.agentId,
          model: hosted.modelSource,
          provider: model.provider,
          modelId: model.model,
        },
        'hosting agent',
      );
      if (registeredAs !== null) {
        // Attaching keeps the registered passport: people who read it are told another model than the one answering.
        log.warn(
          { agent: agentConfig.name, agentId: client.agentId, passport: registeredAs, hosted: model },
          'the passport names another model than the one hosted',
        );
      }
      const resumed = await client.resumePendingTurns();
      if (resumed > 0) log.info({ agent: agentConfig.name, agentId: client.agentId, resumed }, 'resumed pending turns');
    }
  } catch (err) {
    if (err instanceof RunnerConfigError) {
      process.stderr.write(`${err.message}\n`);
      await hub.close();
      return 2;
    }
    throw err;
  }
  ops.hosting(clients);
  log.info({ agents: clients.length, prefix }, 'runner ready');

  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) {
        resolve(1);
        return;
      }
      stopping = true;
      ops.stopping();
      log.info({ signal }, 'stopping: finishing turns in progress');
      void Promise.all([hub.close().then(() => cancellations.settled()), ops.close()]).then(
        () => {
          log.info({}, 'stopped');
          resolve(0);
        },
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    // An agent whose inbox stopped by itself (its connection closed for good, its consumer deleted) no longer
    // answers: exit non-zero so that a supervisor restarts the runner, instead of living on without serving it.
    for (const client of clients) {
      void client.closed().then((result) => {
        if (stopping || !(result instanceof Error)) return;
        stopping = true;
        ops.stopping();
        log.error(
          { agent: client.passport.name, agentId: client.agentId, err: result },
          'agent stopped by itself; exiting',
        );
        void Promise.all([hub.close(), ops.close()]).finally(() => resolve(1));
      });
    }
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`agent-runner failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
