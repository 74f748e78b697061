/**
 * `npm start`: the whole local stack and a demo. Without NATS_URL it starts a local nats-server with JetStream
 * (data in .data/nats), then hub-service, then an agent-runner hosting the demo agents, then runs one channel of
 * each protocol as a human participant and prints the transcripts. The stack keeps running until Ctrl-C
 * (`--exit` stops it after the demo). Logs of the services go to .data/logs/.
 */
import type { NatsServer } from '@ag2net/test-support';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runDemo } from './stack/demo.js';
import { startLocalNats } from './stack/nats.js';
import { startStackService, type StackService } from './stack/services.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DATA = join(ROOT, '.data');
const say = (line: string): void => void process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { exit: { type: 'boolean' }, prefix: { type: 'string' } } });
  const prefix = values.prefix ?? process.env['AG2NET_PREFIX'] ?? 'ag2';
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
      say('· starting nats-server with JetStream (data in .data/nats)');
      nats = await startLocalNats(join(DATA, 'nats'), say);
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
    say(`the stack keeps running at ${natsUrl} (prefix ${prefix}); press Ctrl-C to stop.`);
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
