import { startNatsServer, uniqueName, type NatsServer } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from './support/processes.js';

let nats: NatsServer;

beforeAll(async () => {
  nats = await startNatsServer();
});

afterAll(async () => {
  await nats.stop();
});

describe('npm start', () => {
  it('brings the stack up on a given NATS, runs one channel of each protocol offline, and stops cleanly', async () => {
    const start = startService('start', 'scripts/start.ts', ['--exit', '--prefix', uniqueName('start')], {
      NATS_URL: nats.url,
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
      AG2NET_LLM_BASE_URL: '',
    });
    expect(await start.exited).toBe(0);
    const out = start.output();
    expect(out).toContain(`· using NATS at ${nats.url}`);
    expect(out).toContain('· agents answer with the scripted offline model');
    for (const step of ['1/4 consulting', '2/4 conversation', '3/4 discussion', '4/4 workflow'])
      expect(out).toContain(step);
    expect(out).toContain('· channel closed: consulting_complete');
    expect(out).toContain('workflow ended: resolved');
    expect(out).toContain('stopped.');
  }, 120_000);
});
