import {
  AgentClient,
  DisconnectedError,
  EnvelopeTimeoutError,
  HubClient,
  ackInvite,
  isInviteFor,
  replyEnvelopeId,
} from '@ag2net/client';
import { startHub, type Hub } from '@ag2net/hub';
import { EV_CHANNEL_OPENED, EV_TEXT, type Envelope } from '@ag2net/protocol';
import { startNatsServer, uniqueName, waitFor, type NatsServer } from '@ag2net/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

let nats: NatsServer;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
});

afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

afterAll(async () => {
  await nats.stop();
});

async function net(): Promise<{ hub: Hub; client: HubClient; prefix: string }> {
  const prefix = uniqueName('cl');
  const hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
  const client = await HubClient.connect({ servers: nats.url, prefix });
  open.push(hub, client);
  return { hub, client, prefix };
}

const texts = (envelopes: readonly Envelope[]): string[] =>
  envelopes.filter((e) => e.event_type === EV_TEXT).map((e) => String(e.event_data['text']));

/**
 * A handler that accepts invites and, for each text, records it after a short pause while counting how many texts
 * run at once (`maxRunning`): the probe of turn exclusivity.
 */
function countingTurns(pauseMs: number): {
  handler: (who: string) => (e: Envelope, self: AgentClient) => Promise<void>;
  handled: string[];
  maxRunning: () => number;
} {
  let running = 0;
  let max = 0;
  const handled: string[] = [];
  return {
    handled,
    maxRunning: () => max,
    handler: (who) => async (e, self) => {
      if (isInviteFor(self, e)) {
        await ackInvite(self, e);
        return;
      }
      if (e.event_type !== EV_TEXT) return;
      running += 1;
      max = Math.max(max, running);
      await new Promise((r) => setTimeout(r, pauseMs));
      handled.push(`${String(e.event_data['text'])}@${who}`);
      running -= 1;
    },
  };
}

describe('HubClient participants', () => {
  it('lets a human open a conversation with an agent that accepts the invite, and both read the same log', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.register({ name: 'bob' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    expect(channel.state).toBe('active');
    expect(channel.metadata.participants.map((p) => p.agent_id)).toEqual([alice.agentId, bob.agentId]);
    // A wait starts when it is called: start it before the send whose answer it waits for.
    const arriving = bob.nextEnvelope({ predicate: (e) => e.event_type === EV_TEXT, timeout: 5000 });
    await channel.send('hello bob');
    const got = await arriving;
    expect(got?.event_data).toEqual({ text: 'hello bob' });
    expect(got?.sender_id).toBe(alice.agentId);
    const answered = alice.nextEnvelope({ predicate: (e) => e.event_type === EV_TEXT, timeout: 5000 });
    await bob.send(channel.channelId, 'hi alice', { causationId: got?.envelope_id ?? null });
    const reply = await answered;
    expect(reply?.causation_id).toBe(got?.envelope_id);
    expect(texts(await alice.readWal(channel.channelId))).toEqual(['hello bob', 'hi alice']);
    expect(texts(await bob.readWal(channel.channelId))).toEqual(['hello bob', 'hi alice']);
  });

  it('composes human callbacks in the order they were added', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.registerHuman({ name: 'bob' });
    const seen: string[] = [];
    bob.onEnvelope((e) => void seen.push(`first:${e.event_type}`));
    bob.onEnvelope((e) => void seen.push(`second:${e.event_type}`));
    const channel = await alice.open({ type: 'conversation', target: bob.agentId });
    await channel.send('x');
    await waitFor(() => seen.length >= 6, { what: 'callbacks' });
    expect(seen).toEqual([
      'first:ag2.channel.invite',
      'second:ag2.channel.invite',
      'first:ag2.channel.opened',
      'second:ag2.channel.opened',
      `first:${EV_TEXT}`,
      `second:${EV_TEXT}`,
    ]);
  });

  it('times out a wait with EnvelopeTimeoutError and ends envelopes() on disconnect', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    await expect(alice.nextEnvelope({ timeout: 100 })).rejects.toBeInstanceOf(EnvelopeTimeoutError);
    const iterated: Envelope[] = [];
    const loop = (async () => {
      for await (const e of alice.envelopes()) iterated.push(e);
    })();
    await alice.disconnect();
    await loop;
    expect(iterated).toEqual([]);
    await expect(alice.nextEnvelope()).rejects.toBeInstanceOf(DisconnectedError);
    await expect(alice.send('c', 'x')).rejects.toBeInstanceOf(DisconnectedError);
  });

  it('refuses a human passport in register() and an unknown name in attach() without a passport', async () => {
    const { client } = await net();
    await expect(client.register({ name: 'h', kind: 'human' })).rejects.toThrow(
      "register() is for agent-kind participants; use HubClient.registerHuman(...) for kind='human' passports",
    );
    await expect(client.attach('nobody')).rejects.toThrow(
      "attach('nobody'): name is not registered; a passport is required to fall back to register()",
    );
  });

  it('delivers what an agent missed while disconnected once it attaches again, exactly once', async () => {
    const { client, prefix } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.register({ name: 'bob' });
    const opened = bob.nextEnvelope({ predicate: (e) => e.event_type === EV_CHANNEL_OPENED, timeout: 5000 });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await opened; // seen, so being handled: the disconnect lets it finish and acks it
    await bob.disconnect();
    await channel.send('one');
    await channel.send('two');

    const other = await HubClient.connect({ servers: nats.url, prefix });
    open.push(other);
    const again = await other.attach('bob');
    // Subscribed before anything else is awaited: no delivery of the attach can come first.
    await using subscription = again.subscribe();
    expect(again.agentId).toBe(bob.agentId);
    const got: Envelope[] = [];
    for (;;) {
      const e = await subscription.receive({ timeout: 1500 }).catch(() => null);
      if (e === null) break;
      got.push(e);
    }
    // The invite and the opened envelope were delivered and acked before the disconnect; only the texts are new.
    expect(got.map((e) => e.event_type)).toEqual([EV_TEXT, EV_TEXT]);
    expect(texts(got)).toEqual(['one', 'two']);
  });

  it('runs one channel’s deliveries in order and never two of them at once', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const turns = countingTurns(20);
    const bob = await client.register({ name: 'bob' }, { handler: turns.handler('bob') });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    for (const t of ['a', 'b', 'c', 'd']) await channel.send(t);
    await waitFor(() => turns.handled.length === 4, { what: 'four turns' });
    expect(turns.handled).toEqual(['a@bob', 'b@bob', 'c@bob', 'd@bob']);
    expect(turns.maxRunning()).toBe(1);
    expect(bob).toBeInstanceOf(AgentClient);
  });

  it('gives an answer to a trigger the same envelope id on every attempt, so the hub admits it once', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.register({ name: 'bob' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const trigger = await channel.send('question');
    const id = replyEnvelopeId(bob.agentId, trigger);
    const first = await bob.sendEnvelope({
      channel_id: channel.channelId,
      event_type: EV_TEXT,
      event_data: { text: 'answer' },
      envelope_id: id,
      causation_id: trigger,
    });
    const second = await bob.sendEnvelope({
      channel_id: channel.channelId,
      event_type: EV_TEXT,
      event_data: { text: 'answer again' },
      envelope_id: id,
      causation_id: trigger,
    });
    expect(second).toEqual(first);
    expect(texts(await alice.readWal(channel.channelId))).toEqual(['question', 'answer']);
  });

  it('shares one agent’s deliveries between two replicas, each handled once, never two turns of a channel at once', async () => {
    const { client, prefix } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const first = await client.register({ name: 'bob' });
    const replica = await HubClient.connect({ servers: nats.url, prefix });
    open.push(replica);
    const { handler, handled, maxRunning } = countingTurns(15);
    first.onEnvelope(handler('first'));
    const second = await replica.attach('bob', { handler: handler('second') });
    expect(second.agentId).toBe(first.agentId);
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const sent = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const t of sent) await channel.send(t);
    await waitFor(() => handled.length === sent.length, { timeoutMs: 15_000, what: 'every turn handled' });
    expect(handled.map((h) => h.split('@')[0]).sort()).toEqual(sent);
    expect(maxRunning()).toBe(1);
  });
});
