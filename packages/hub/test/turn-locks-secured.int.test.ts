/**
 * Turn locks under least-privilege credentials: replicas of one agent, each on the identity's own NATS connection
 * with the credentials the hub issued, exclude each other through the hub's turn-lock operations. An identity has no
 * right on any KV bucket, so this works only because the locks are hub operations.
 */
import { HubClient, ackInvite, isInviteFor, type AgentHandler } from '@ag2net/client';
import { EV_TEXT } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecuredStack, type SecuredStack } from '../../../test/support/secured-stack.js';

let stack: SecuredStack;
let dir: string;
const open: HubClient[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({ openRegistration: true });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-turn-locks-'));
}, 60_000);

afterAll(async () => {
  for (const hub of open.reverse()) await hub.close({ graceMs: 0 });
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
});

async function registrant(): Promise<HubClient> {
  const hub = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.paths.registrantCreds });
  open.push(hub);
  return hub;
}

describe('turn locks on a secured hub', () => {
  it('two replicas of one agent, each on its issued credentials, never run two turns of a channel at once', async () => {
    const handled: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const handler: AgentHandler = async (e, self) => {
      if (isInviteFor(self, e)) await ackInvite(self, e);
      if (e.event_type !== EV_TEXT) return;
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      // A turn that takes a while, so that the other replica's delivery arrives while it runs.
      await new Promise((resolve) => setTimeout(resolve, 150));
      handled.push(String(e.event_data['text']));
      running -= 1;
    };
    const credsPath = join(dir, 'bob.creds');
    const first = await (await registrant()).register({ name: 'bob' }, { credsPath, handler });
    const second = await (await registrant()).attach('bob', { credsPath, handler });
    const alice = await (await registrant()).registerHuman({ name: 'alice' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });

    for (const text of ['one', 'two', 'three', 'four']) await channel.send(text);
    await waitFor(() => handled.length === 4, { timeoutMs: 20_000, what: 'four turns' });
    expect([[...handled].sort(), maxRunning]).toEqual([['four', 'one', 'three', 'two'], 1]);

    // The same exclusion, asked of the hub directly by each replica over its own identity connection.
    const take = (replica: typeof first, holder: string) =>
      replica.hub.call(
        'acquireTurnLock',
        { channel_id: channel.channelId, holder, ttl_ms: 60_000 },
        { caller: replica.agentId },
      );
    expect([await take(first, 'replica-x'), await take(second, 'replica-y')]).toEqual([
      { acquired: true },
      { acquired: false },
    ]);
    await first.hub.call(
      'releaseTurnLock',
      { channel_id: channel.channelId, holder: 'replica-x' },
      { caller: first.agentId },
    );
    expect(await take(second, 'replica-y')).toEqual({ acquired: true });
  });
});
