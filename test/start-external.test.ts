import { startNatsServer, uniqueName, type NatsServer } from '@ag2net/test-support';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from './support/processes.js';

let nats: NatsServer;
let data: string;

beforeAll(async () => {
  nats = await startNatsServer();
  data = await mkdtemp(join(tmpdir(), 'ag2net-start-insecure-'));
});

afterAll(async () => {
  await nats.stop();
  await rm(data, { recursive: true, force: true });
});

describe('npm start --insecure', () => {
  it('runs the demo without any auth against a server without auth, and warns loudly', async () => {
    const prefix = uniqueName('insecure');
    const env = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '', NATS_URL: nats.url };
    const run = startService(
      'start-insecure',
      'scripts/start.ts',
      ['--insecure', '--exit', '--prefix', prefix, '--data-dir', data],
      env,
    );
    expect(await run.exited, run.output()).toBe(0);
    const out = run.output();
    expect(out.startsWith('\n!!! --insecure: NATS runs WITHOUT AUTHENTICATION.')).toBe(true);
    expect(out).toContain(`· using NATS at ${nats.url}`);
    expect(out).toContain('· channel closed: consulting_complete');
    expect(out).toContain('workflow ended: resolved');
    expect(out).toContain('stopped.');
    expect(out).not.toContain('NATS auth in');
    // Nothing of auth was laid out.
    expect((await readdir(data)).sort()).toEqual(['logs']);
  }, 120_000);
});
