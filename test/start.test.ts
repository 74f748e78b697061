import { HubClient } from '@ag2net/client';
import { startNatsServer, uniqueName, waitFor, type NatsServer } from '@ag2net/test-support';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from './support/processes.js';

let nats: NatsServer;

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await nats.stop();
});

/** The demo offline: no model in the environment. */
const OFFLINE = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '' };

describe('npm start', () => {
  it('runs the demo, keeps the stack up for the README example (twice), and runs again over a channel left open', async () => {
    const prefix = uniqueName('start');
    const env = { ...OFFLINE, NATS_URL: nats.url };
    const first = startService('start', 'scripts/start.ts', ['--prefix', prefix], env);
    const exportLine = `  export NATS_URL=${nats.url} AG2NET_PREFIX=${prefix}`;
    await waitFor(() => first.output().includes(exportLine) || first.child.exitCode !== null, {
      what: 'the stack to say what to export',
      timeoutMs: 120_000,
    });
    const out = first.output();
    expect(out).toContain(`· using NATS at ${nats.url}`);
    expect(out).toContain('· agents answer with the scripted offline model');
    for (const step of ['1/4 consulting', '2/4 conversation', '3/4 discussion', '4/4 workflow'])
      expect(out).toContain(step);
    expect(out).toContain('· channel closed: consulting_complete');
    expect(out).toContain('workflow ended: resolved');
    expect(out).toContain(
      `${exportLine}\n  node --conditions=@ag2net/source --import tsx test/fixtures/readme/sdk.ts\n`,
    );

    // The README's SDK example, as written, against the running stack: twice, as a reader would try it.
    for (const run of [1, 2]) {
      const sdk = startService(`sdk-${run}`, 'test/fixtures/readme/sdk.ts', [], { ...env, AG2NET_PREFIX: prefix });
      expect(await sdk.exited).toBe(0);
      expect(sdk.output()).toBe('ag2.msg.text: {"text":"A log is append-only."}\n');
    }

    // A run that stops half-way leaves a question to the expert open: the expert's script is spent, so it stays.
    {
      await using hub = await HubClient.connect({ servers: nats.url, prefix });
      const you = await hub.attachHuman('you');
      const open = await you.open({ type: 'consulting', target: 'expert' });
      await open.send('Are you still there?');
    }
    expect(await first.stop('SIGINT')).toBe(0);
    expect(first.output()).toContain('stopped.');

    const second = startService('start-again', 'scripts/start.ts', ['--exit', '--prefix', prefix], env);
    expect(await second.exited).toBe(0);
    const again = second.output();
    expect(again).toContain('· closed 1 channel(s) an earlier run left open');
    expect(again).toContain('· channel closed: consulting_complete');
    expect(again).toContain('workflow ended: resolved');
    expect(again).toContain('stopped.');
  }, 240_000);

  it('shows in the README exactly the SDK example the test above runs', async () => {
    const readme = await readFile('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## Using the SDK'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBe(await readFile('test/fixtures/readme/sdk.ts', 'utf8'));
  });
});
