/**
 * `npm start`: the whole local stack and a demo. Without NATS_URL it starts a local nats-server with JetStream
 * (data in .data/nats) on port 4222, or on a random port when 4222 is taken (data in .data/nats-alt), then
 * hub-service, closes the channels an earlier unfinished run left open, starts an agent-runner hosting the demo
 * agents, then runs one channel of each protocol as a human participant and prints the transcripts. The stack keeps running until Ctrl-C, and says
 * what to export to use it (`--exit` stops it after the demo). Logs of the services go to .data/logs/. It can be run
 * again in any state the last run left.
 */
import { DEFAULT_PREFIX } from '@ag2net/protocol';
import { startNatsServer, type NatsServer } from '@ag2net/test-support';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runDemo } from './stack/demo.js';
import { closeLeftoverChannels } from './stack/leftovers.js';
import { ensureNatsServerBinary } from './stack/nats.js';
import { startStackService, type StackService } from './stack/services.js';

/** The port `npm start` gives its nats-server when it is free: NATS's own default, what clients try first. */
const NATS_PORT = 4222;

/** True when nothing listens on `port` of 127.0.0.1. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * Starts nats-server with JetStream on 4222 when it is free, its data in `.data/nats` (kept between runs). When 4222
 * is taken — perhaps by the nats-server of a run that is still going — it takes a random port and keeps its data in
 * `.data/nats-alt`, so that two servers never share one store.
 */
async function startLocalNats(dataRoot: string, say: (line: string) => void): Promise<NatsServer> {
  ensureNatsServerBinary(say);
  const free = await portIsFree(NATS_PORT);
  const dir = free ? 'nats' : 'nats-alt';
  say(`· starting nats-server with JetStream (data in .data/${dir})`);
  await mkdir(join(dataRoot, dir), { recursive: true });
  const server = await startNatsServer({
    storeDir: join(dataRoot, dir),
    name: 'ag2net-local',
    ...(free ? { port: NATS_PORT } : {}),
  });
  say(
    free
      ? `· nats-server listens on ${server.url}`
      : `· port ${NATS_PORT} is taken (another nats-server?); this one listens on ${server.url}`,
  );
  return server;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DATA = join(ROOT, '.data');
const say = (line: string): void => void process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { exit: { type: 'boolean' }, prefix: { type: 'string' } } });
  const prefix = values.prefix ?? (process.env['AG2NET_PREFIX'] || DEFAULT_PREFIX);
  const services: StackService[] = [];
  let nats: NatsServer | null = null;
  let stopping: Promise<void> | null = null;
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      say('\nstopping …');
      for (const s of [...services].reverse()) await s.stop();
      await nats?.stop();
      say('stopped.');
    })());
  process.on('SIGINT', () => void stopAll().then(() => process.exit(0)));
  process.on('SIGTERM', () => void stopAll().then(() => process.exit(0)));

  try {
    let natsUrl = process.env['NATS_URL'];
    if (natsUrl === undefined || natsUrl === '') {
      nats = await startLocalNats(DATA, say);
      natsUrl = nats.url;
    } else {
      say(`· using NATS at ${natsUrl}`);
    }
    const env = { NATS_URL: natsUrl, AG2NET_PREFIX: prefix };
    const logDir = join(DATA, 'logs');
    say('· starting hub-service');
    services.push(
      await startStackService({
        root: ROOT,
        logDir,
        name: 'hub-service',
        entry: 'hub-service/src/main.ts',
        args: [],
        env,
      }),
    );
    const leftovers = await closeLeftoverChannels({ natsUrl, prefix, retryForMs: 30_000 });
    if (leftovers > 0) say(`· closed ${leftovers} channel(s) an earlier run left open`);
    say('· starting agent-runner with the demo agents');
    services.push(
      await startStackService({
        root: ROOT,
        logDir,
        name: 'agent-runner',
        entry: 'agent-runner/src/main.ts',
        args: ['agent-runner/demo/agents.yaml'],
        env,
      }),
    );
    const llm = process.env['OPENAI_API_KEY']
      ? 'OpenAI'
      : process.env['ANTHROPIC_API_KEY']
        ? 'Anthropic'
        : process.env['AG2NET_LLM_BASE_URL']
          ? process.env['AG2NET_LLM_BASE_URL']
          : 'the scripted offline model (set OPENAI_API_KEY, ANTHROPIC_API_KEY or AG2NET_LLM_BASE_URL for a real one)';
    say(`· agents answer with ${llm}`);
    const started = Date.now();
    await runDemo({ natsUrl, prefix: `${prefix}`, say, turnTimeoutMs: 120_000 });
    say(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s. Logs: .data/logs/`);
    if (values.exit === true) {
      await stopAll();
      return 0;
    }
    say(`\nthe stack keeps running at ${natsUrl} (prefix ${prefix}); press Ctrl-C to stop.`);
    say('next, in another terminal, run the SDK example of README.md against it:');
    say(`  export NATS_URL=${natsUrl}${prefix === DEFAULT_PREFIX ? '' : ` AG2NET_PREFIX=${prefix}`}`);
    say('  node --conditions=@ag2net/source --import tsx test/fixtures/readme/sdk.ts');
    await new Promise(() => undefined);
    return 0;
  } catch (err) {
    process.stderr.write(`\nnpm start failed: ${err instanceof Error ? err.message : String(err)}\n`);
    for (const s of services) process.stderr.write(`  see ${s.logFile}\n`);
    await stopAll();
    return 1;
  }
}

void main().then((code) => process.exit(code));
