/**
 * The demo's person and the console's person are one identity: `npm start`'s demo registers `you` with the key the
 * bridge derives for it, so whoever signs in to the console as `you` sees the demo's channels. And the demo runs to
 * its end while that person is signed in to the bridge with a live stream open, whose connection consumes the same
 * inbox as the demo's: the demo follows its channels by their logs, so no answer it waits for goes missing.
 */
import { startBridge, personSeed, type Bridge } from '@ag2net/bridge';
import { EnvelopeSchema } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_AGENTS, DEMO_PERSON, runDemo } from '../scripts/stack/demo.js';
import { call, openSse } from './support/bridge-http.js';
import { startService, type ServiceProcess } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const OFFLINE = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '' };
const KEYS = Object.fromEntries([...DEMO_AGENTS, DEMO_PERSON].map((n) => [n, `key-of-${n}-${uniqueName('k')}`]));
const secret = randomBytes(32);

let stack: SecuredStack;
let bridge: Bridge;
let runner: ServiceProcess;
let dir: string;

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-demo-console-'));
  const keysFile = join(dir, 'api-keys.json');
  await writeFile(keysFile, JSON.stringify(KEYS), { mode: 0o600 });
  runner = startService(
    'runner',
    'agent-runner/src/main.ts',
    [
      'agent-runner/demo/agents.yaml',
      ...['--nats-url', stack.url, '--prefix', stack.prefix],
      ...['--creds', stack.paths.registrantCreds, '--creds-dir', join(dir, 'agents'), '--api-keys', keysFile],
    ],
    OFFLINE,
  );
  // The people the bridge signs in: the demo's person only, with the key the hub admits it with.
  bridge = await startBridge({
    servers: stack.url,
    prefix: stack.prefix,
    registrantCreds: stack.registrantCreds,
    operatorCreds: stack.operatorCallerCreds,
    apiKeys: { [DEMO_PERSON]: KEYS[DEMO_PERSON] ?? '' },
    secret,
    port: 0,
    pollMs: 100,
  });
}, 60_000);

afterAll(async () => {
  await runner?.stop('SIGKILL');
  await bridge?.close();
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

const TokenReply = z.object({ token: z.string() });
const ChannelsReply = z.object({ channels: z.array(z.object({ manifest: z.object({ type: z.string() }) })) });

describe("the demo's person on the bridge", () => {
  it('is the demo person while signed in to the console with a stream open, and the demo still gets every answer', async () => {
    await waitFor(() => (runner.output().match(/"hosting agent"/g) ?? []).length === DEMO_AGENTS.length, {
      what: 'the runner to host the demo agents',
      timeoutMs: 45_000,
    });
    const signIn = await call(bridge.url, '/v1/session', { body: { name: DEMO_PERSON, api_key: KEYS[DEMO_PERSON] } });
    expect(signIn.status).toBe(200);
    const { token } = TokenReply.parse(signIn.body);
    // Signed in first: the bridge registers the person with the key it derives, and its stream holds the person's
    // connection (and inbox consumer) open through the demo.
    const stream = await openSse(`${bridge.url}/v1/me/stream`, { authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    try {
      const lines: string[] = [];
      await runDemo({
        natsUrl: stack.url,
        prefix: stack.prefix,
        say: (l) => void lines.push(l),
        turnTimeoutMs: 15_000,
        auth: {
          creds: stack.paths.registrantCreds,
          apiKeys: KEYS,
          credsDir: join(dir, 'people'),
          personSeed: personSeed(secret, DEMO_PERSON),
        },
      });
      const text = lines.join('\n');
      const answers = Object.fromEntries(DEMO_AGENTS.map((n) => [n, text.match(new RegExp(` ${n}: `, 'g'))?.length]));
      expect(answers).toEqual({ expert: 1, pal: 2, critic: 1, optimist: 1, triage: 1, billing: 1 });
      expect(text).toContain('· channel closed: consulting_complete');
      expect(text).toContain('workflow ended: resolved');

      // The console's `you` lists the demo's four channels, and its stream carried the agents' answers.
      const closed = await call(bridge.url, '/v1/channels?state=closed', { token });
      expect(closed.status).toBe(200);
      const types = ChannelsReply.parse(closed.body).channels.map((c) => c.manifest.type);
      expect(types.sort()).toEqual(['consulting', 'conversation', 'discussion', 'workflow']);
      const me = z.object({ agent_id: z.string() }).parse((await call(bridge.url, '/v1/me', { token })).body);
      const first = await stream.next();
      expect(first.event).toBe('envelope');
      const envelope = EnvelopeSchema.parse(first.data);
      expect(envelope.sender_id).not.toBe(me.agent_id);
    } finally {
      stream.close();
    }
  }, 60_000);
});
