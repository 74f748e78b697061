#!/usr/bin/env node
import { pino } from 'pino';
import { ConfigError, USAGE, bridgeOptionsOf, loadConfig, watchPeopleFile, type BridgeConfig } from './config.js';
import { startBridgeOps } from './ops.js';
import { startBridge } from './server.js';

async function main(): Promise<number> {
  let config: BridgeConfig | 'help';
  let options;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
    if (config === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    options = await bridgeOptionsOf(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = pino({ name: 'bridge', level: config.logLevel });
  if (config.authDir === undefined) log.warn({}, 'no --auth-dir: an unsecured deployment (no credentials anywhere)');
  if (config.secret === undefined) log.warn({}, 'no --secret: a random one; tokens work on this process only');
  // A person added to the people file may sign in from then on, without a restart.
  const watchingPeople =
    config.apiKeys === undefined || options.apiKeys === undefined
      ? null
      : watchPeopleFile({ path: config.apiKeys, people: options.apiKeys, log });
  const ops = await startBridgeOps({ port: config.opsPort, log });
  const bridge = await startBridge({ ...options, logger: log, observer: ops.observer });
  ops.serving(bridge);
  const stop = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await stop;
  log.info({}, 'stopping');
  watchingPeople?.[Symbol.dispose]();
  ops.stopping();
  await bridge.close();
  await ops.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
