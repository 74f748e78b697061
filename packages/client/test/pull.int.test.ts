import { EnvelopeTimeoutError, HubClient, InboxClosedError, isInviteFor, ackInvite } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { EV_TEXT, type Envelope } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { afterEach, describe, expect, it } from 'vitest';

const nats = natsPerFile();
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

async function net(): Promise<{ client: HubClient; prefix: string }> {
  const prefix = uniqueName('pull');
  const hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
  const client = await HubClient.connect({ servers: nats.url, prefix });
  open.push(hub, client);
  return { client, prefix };
}

const text = (e: Envelope | null): unknown => e?.event_data['text'];

describe('pulling deliveries', () => {
  it('serves two concurrent waits on two channels of one human without either taking the other’s envelope', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.registerHuman({ name: 'bob' });
    const carol = await client.registerHuman({ name: 'carol' });
    const withBob = await alice.open({ type: 'conversation', target: 'bob' });
    const withCarol = await alice.open({ type: 'conversation', target: 'carol' });
    const isText = (e: Envelope): boolean => e.event_type === EV_TEXT;

    const fromBob = alice.waitForChannelEvent(withBob.channelId, { predicate: isText, timeout: 10_000 });
    const fromCarol = alice.waitForChannelEvent(withCarol.channelId, { predicate: isText, timeout: 10_000 });
    // Carol's text reaches the first wait (bob's channel) first: a shared queue would drop it there.
    await carol.send(withCarol.channelId, 'from carol');
    await bob.send(withBob.channelId, 'from bob');

    expect([text(await fromBob), text(await fromCarol)]).toEqual(['from bob', 'from carol']);
  });

  it('keeps nothing for the pull side of an agent whose handler consumed its deliveries', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const handled: string[] = [];
    const bob = await client.register(
      { name: 'bob' },
      {
        handler: async (e, self) => {
          if (isInviteFor(self, e)) await ackInvite(self, e);
          handled.push(e.event_type === EV_TEXT ? String(e.event_data['text']) : e.event_type);
        },
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    for (const t of ['a', 'b', 'c']) await channel.send(t);
    await waitFor(() => handled.length === 5, { what: 'bob handled the invite, the opening and three texts' });
    expect(handled).toEqual(['ag2.channel.invite', 'ag2.channel.opened', 'a', 'b', 'c']);

    // Nothing was queued while nobody pulled: the wait sees only what comes after it.
    await expect(bob.nextEnvelope({ timeout: 300 })).rejects.toBeInstanceOf(EnvelopeTimeoutError);
    const next = bob.nextEnvelope({ timeout: 5000 });
    await channel.send('d');
    expect(text(await next)).toBe('d');
  });

  it('gives a person’s wait started after the answer arrived that answer, and to one wait only', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.registerHuman({ name: 'bob' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const isText = (e: Envelope): boolean => e.event_type === EV_TEXT;
    const seen = bob.waitForChannelEvent(channel.channelId, { predicate: isText, timeout: 10_000 });
    await channel.send('early');
    await seen;
    // Bob's wait took 'early'; alice's has not started yet when bob's answer arrives.
    await bob.send(channel.channelId, 'answer');
    await waitFor(async () => (await alice.readWal(channel.channelId)).length >= 3, { what: 'the answer admitted' });
    await expect(bob.nextEnvelope({ predicate: isText, timeout: 300 })).rejects.toBeInstanceOf(EnvelopeTimeoutError);
    expect(text(await alice.nextEnvelope({ predicate: isText, timeout: 10_000 }))).toBe('answer');
    await expect(alice.nextEnvelope({ predicate: isText, timeout: 300 })).rejects.toBeInstanceOf(EnvelopeTimeoutError);
  });

  it('iterates a subscription until break, which releases it, while another one goes on', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.registerHuman({ name: 'bob' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const first = bob.subscribe({ channelId: channel.channelId, predicate: (e) => e.event_type === EV_TEXT });
    await using second = bob.subscribe({ channelId: channel.channelId, predicate: (e) => e.event_type === EV_TEXT });
    for (const t of ['a', 'b', 'c']) await channel.send(t);
    const firstGot: string[] = [];
    for await (const e of first) {
      firstGot.push(String(e.event_data['text']));
      if (firstGot.length === 2) break;
    }
    expect([firstGot, first.closed]).toEqual([['a', 'b'], true]);
    const secondGot = [await second.receive(), await second.receive(), await second.receive()].map(text);
    expect(secondGot).toEqual(['a', 'b', 'c']);
  });

  it('resolves closed() with undefined after disconnect, and with InboxClosedError when the connection dies', async () => {
    const { client, prefix } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const waiting = alice.nextEnvelope();
    await alice.disconnect();
    expect([await alice.closed(), await waiting]).toEqual([undefined, null]);

    const doomed = await HubClient.connect({ servers: nats.url, prefix });
    const bob = await doomed.registerHuman({ name: 'bob' });
    const subscription = bob.subscribe();
    await doomed.nc.close();
    const result = await bob.closed();
    expect(result).toBeInstanceOf(InboxClosedError);
    expect([bob.disconnected, await subscription.receive()]).toEqual([true, null]);
  });
});
