/**
 * The SDK on a secured deployment: every identity it registers runs over its own NATS connection with the
 * credentials the hub issued for the identity's own key, persisted where asked, reused by `attach` and renewed
 * before they expire.
 */
import { HubClient, ackInvite, isInviteFor, type AgentClient } from '@ag2net/client';
import { EV_TEXT, type Envelope } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

let stack: SecuredStack;
let dir: string;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({ openRegistration: true });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-creds-'));
});

afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

afterAll(async () => {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A hub client on the registrant's credentials (a `.creds` file path), closed after the test. */
async function registrant(on: SecuredStack = stack, retryForMs?: number): Promise<HubClient> {
  const hub = await HubClient.connect({
    servers: on.url,
    prefix: on.prefix,
    creds: on.paths.registrantCreds,
    ...(retryForMs === undefined ? {} : { retryForMs }),
  });
  open.push(hub);
  return hub;
}

/** An agent handler that accepts invites and keeps every text it receives. */
function keeper(texts: string[]): (e: Envelope, self: AgentClient) => Promise<void> {
  return async (e, self) => {
    if (isInviteFor(self, e)) await ackInvite(self, e);
    if (e.event_type === EV_TEXT) texts.push(String(e.event_data['text']));
  };
}

/** The JWT and seed of a `.creds` file's text. */
function credsParts(text: string): { jwt: string; seed: string } {
  const jwt = /BEGIN NATS USER JWT-+\s+(\S+)/.exec(text)?.[1];
  const seed = /BEGIN USER NKEY SEED-+\s+(\S+)/.exec(text)?.[1];
  if (jwt === undefined || seed === undefined) throw new Error('not a .creds file');
  return { jwt, seed };
}

const ClaimsSchema = z.looseObject({ name: z.string(), sub: z.string(), exp: z.number() });

function claims(jwt: string): z.infer<typeof ClaimsSchema> {
  return ClaimsSchema.parse(JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')));
}

describe('register on a secured hub', () => {
  it('runs each identity over its own connection, bound to it, and the conversation works', async () => {
    const hub = await registrant();
    const got: string[] = [];
    const bob = await hub.register({ name: 'bob' }, { handler: keeper(got) });
    const alice = await hub.registerHuman({ name: 'alice' });

    expect([alice.hub === hub, alice.hub.nc === hub.nc, bob.hub.nc === alice.hub.nc]).toEqual([false, false, false]);
    expect([hub.defaultCaller, alice.hub.defaultCaller, bob.hub.defaultCaller]).toEqual([
      null,
      alice.agentId,
      bob.agentId,
    ]);
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('hello bob');
    await waitFor(() => got.includes('hello bob'), { timeoutMs: 10_000 });
    expect((await alice.getChannel(channel.channelId)).participants.map((p) => p.agent_id).sort()).toEqual(
      [alice.agentId, bob.agentId].sort(),
    );
    expect((await bob.listChannels()).map((c) => c.channel_id)).toEqual([channel.channelId]);
  });

  it('keeps two identities of one hub client from acting as each other', async () => {
    const hub = await registrant(stack, 1_500);
    const mallory = await hub.registerHuman({ name: 'mallory' });
    const victim = await hub.registerHuman({ name: 'victim' });
    const friend = await hub.registerHuman({ name: 'friend' });
    const channel = await friend.open({ type: 'conversation', target: 'victim' });

    // Mallory's connection may publish only on her own subjects: NATS drops a request made as the victim.
    const asVictim = { caller: victim.agentId, timeout: 500 };
    await expect(mallory.hub.getChannel(channel.channelId, asVictim)).rejects.toThrow();
    await expect(
      mallory.hub.call(
        'post',
        { channel_id: channel.channelId, sender_id: victim.agentId, event_type: EV_TEXT, event_data: { text: 'x' } },
        asVictim,
      ),
    ).rejects.toThrow();
    // As herself she is no participant of the channel, which she is answered as if there were none.
    await expect(mallory.getChannel(channel.channelId)).rejects.toMatchObject({
      code: 'not_found',
      message: `channel not found: ${channel.channelId}`,
    });
    expect((await victim.readWal(channel.channelId)).filter((e) => e.event_type === EV_TEXT)).toEqual([]);
  });
});

describe('operator', () => {
  it('reads every channel as $operator with the admin credentials', async () => {
    const hub = await registrant();
    const ivy = await hub.registerHuman({ name: 'ivy' });
    const jay = await hub.registerHuman({ name: 'jay' });
    const channel = await ivy.open({ type: 'conversation', target: 'jay' });
    await using operator = await HubClient.connect({
      servers: stack.url,
      prefix: stack.prefix,
      creds: stack.adminCreds,
      operator: true,
    });
    expect(operator.defaultCaller).toBe('$operator');
    expect((await operator.getChannel(channel.channelId)).participants.map((p) => p.agent_id).sort()).toEqual(
      [ivy.agentId, jay.agentId].sort(),
    );
    expect((await operator.listChannels({ limit: 1000 })).map((c) => c.channel_id)).toContain(channel.channelId);
  });
});

describe('persisted credentials', () => {
  it('writes the identity’s .creds file with mode 0600 and attaches with it after a restart', async () => {
    const credsPath = join(dir, 'carol.creds');
    const first = await registrant();
    const carol = await first.register({ name: 'carol' }, { credsPath });
    const alice = await first.registerHuman({ name: 'alice2' });

    expect((await stat(credsPath)).mode & 0o777).toBe(0o600);
    const { jwt, seed } = credsParts(await readFile(credsPath, 'utf8'));
    expect(claims(jwt).name).toBe(carol.agentId);
    expect(seed.startsWith('SU')).toBe(true);

    const channel = await alice.open({ type: 'conversation', target: 'carol' });
    await carol.disconnect();
    await channel.send('while you were away');

    const got: string[] = [];
    const again = await (await registrant()).attach('carol', { credsPath, handler: keeper(got) });
    expect(again.agentId).toBe(carol.agentId);
    await waitFor(() => got.includes('while you were away'), { timeoutMs: 10_000 });
    expect(got).toEqual(['while you were away']);
  });

  it('registers the name anew when the persisted credentials belong to an identity unregistered since', async () => {
    const credsPath = join(dir, 'gus.creds');
    const hub = await registrant();
    const gus = await hub.register({ name: 'gus' }, { credsPath });
    await gus.unregister();
    const again = await hub.attach('gus', { credsPath, passport: { name: 'gus' } });
    expect(again.agentId).not.toBe(gus.agentId);
    expect(claims(credsParts(await readFile(credsPath, 'utf8')).jwt).name).toBe(again.agentId);
  });

  it('refuses to attach a registered name without its credentials', async () => {
    const hub = await registrant();
    await hub.register({ name: 'dora' });
    await expect(hub.attach('dora', { passport: { name: 'dora' } })).rejects.toMatchObject({
      name: 'IdentityCredentialsError',
    });
  });
});

describe('renewal', () => {
  it('keeps a participant working past its first JWT’s lifetime, and attach asks for fresh credentials once they lapsed', async () => {
    await using short = await startSecuredStack({ openRegistration: true, credentialsTtlSeconds: 3 });
    const credsPath = join(dir, 'erin.creds');
    const hub = await registrant(short);
    const got: string[] = [];
    const erin = await hub.register({ name: 'erin' }, { credsPath, handler: keeper(got) });
    const frank = await hub.registerHuman({ name: 'frank' });
    const firstExp = claims(credsParts(await readFile(credsPath, 'utf8')).jwt).exp;

    // Past the first JWT's expiry the server has closed the connections it authenticated; they came back renewed.
    await waitFor(() => Date.now() > firstExp * 1000 + 1_000, { timeoutMs: 10_000 });
    const channel = await frank.open({ type: 'conversation', target: 'erin' });
    await channel.send('still there?');
    await waitFor(() => got.includes('still there?'), { timeoutMs: 10_000 });
    expect(claims(credsParts(await readFile(credsPath, 'utf8')).jwt).exp).toBeGreaterThan(firstExp);

    // Persisted credentials that lapsed while nobody renewed them: attach, on the registrant's connection as a real
    // client makes it, gets fresh ones for the same key.
    await erin.disconnect();
    const lapsed = claims(credsParts(await readFile(credsPath, 'utf8')).jwt);
    await waitFor(() => Date.now() > lapsed.exp * 1000, { timeoutMs: 10_000 });
    const back = await hub.attach('erin', { credsPath });
    const fresh = claims(credsParts(await readFile(credsPath, 'utf8')).jwt);
    expect([back.agentId, fresh.sub, fresh.exp > lapsed.exp]).toEqual([erin.agentId, lapsed.sub, true]);
    await back.disconnect();
  });
});
