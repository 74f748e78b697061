import { HubRpc } from '@ag2net/client';
import { EV_CHANNEL_INVITE, EV_TEXT, EnvelopeSchema, hubNames, type Envelope } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { GONE_CONFIRM_MS } from '@ag2net/hub/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fileStack } from './support/file-stack.js';
import { ackInviteAs } from './support/invites.js';
import { startHubService } from './support/processes.js';

const CHANNELS = 10;
const POSTS_PER_CHANNEL = 110;
const KILL_AFTER_ACKS = 300;

const stack = fileStack();

/** A successful `health` reply: who answered. */
const HealthReply = z.object({ ok: z.literal(true), result: z.looseObject({ hub_id: z.string() }) });

async function firstInboxEnvelope(js: JetStreamClient, prefix: string, agentId: string): Promise<Envelope> {
  const names = hubNames(prefix);
  const consumer = await js.consumers.get(names.inboxStream, names.inboxConsumer(agentId));
  const msg = await consumer.next({ expires: 10_000 });
  if (msg === null) throw new Error(`no delivery for ${agentId}`);
  msg.ack();
  return EnvelopeSchema.parse(msg.json());
}

async function drainInbox(js: JetStreamClient, prefix: string, agentId: string): Promise<Envelope[]> {
  const names = hubNames(prefix);
  const consumer = await js.consumers.get(names.inboxStream, names.inboxConsumer(agentId));
  const pending = (await consumer.info()).num_pending;
  const out: Envelope[] = [];
  while (out.length < pending) {
    const batch = await consumer.fetch({ max_messages: pending - out.length, expires: 2000 });
    for await (const m of batch) {
      out.push(EnvelopeSchema.parse(m.json()));
      m.ack();
    }
  }
  return out;
}

describe('hub-service failover', () => {
  it('loses and duplicates nothing when the active hub is killed in the middle of 1,100 posts across 10 channels', async () => {
    const prefix = uniqueName('fo');
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 60_000 });
    const js = jetstream(stack.nc);
    const first = startHubService({ natsUrl: stack.url, prefix, hubId: 'first' });
    stack.track(first);
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 20_000,
      what: 'the first hub to serve',
    });
    const second = startHubService({ natsUrl: stack.url, prefix, hubId: 'second' });
    stack.track(second);
    await waitFor(() => second.output().includes('started; competing for the lease'), {
      timeoutMs: 20_000,
      what: 'the standby',
    });

    const pairs: { a: string; b: string; channel: string }[] = [];
    for (let i = 0; i < CHANNELS; i += 1) {
      const a = (await rpc.call('register', { passport: { name: `a${i}` } })).passport.agent_id ?? '';
      const b = (await rpc.call('register', { passport: { name: `b${i}` } })).passport.agent_id ?? '';
      const creating = rpc.call('createChannel', { type: 'conversation', participants: [b] }, { caller: a });
      const invite = await firstInboxEnvelope(js, prefix, b);
      expect(invite.event_type).toBe(EV_CHANNEL_INVITE);
      await ackInviteAs(rpc, invite, b);
      pairs.push({ a, b, channel: (await creating).channel.channel_id });
    }

    const acked = new Map<string, { channel: string; sequence: number; sender: string }>();
    let killed = false;
    const kill = async (): Promise<void> => {
      killed = true;
      await first.stop('SIGKILL');
    };
    await Promise.all(
      pairs.map(async ({ a, b, channel }) => {
        for (let n = 0; n < POSTS_PER_CHANNEL; n += 1) {
          const sender = n % 2 === 0 ? a : b;
          const body = { channel_id: channel, sender_id: sender, event_type: EV_TEXT, event_data: { text: `m${n}` } };
          const ack = await rpc.call('post', body, { caller: sender, timeout: 2000 });
          expect(acked.has(ack.envelope_id)).toBe(false);
          acked.set(ack.envelope_id, { channel, sequence: ack.sequence, sender });
          if (!killed && acked.size >= KILL_AFTER_ACKS) void kill();
        }
      }),
    );
    expect(killed).toBe(true);
    expect(acked.size).toBe(CHANNELS * POSTS_PER_CHANNEL);
    expect((await rpc.call('health', {})).hub_id).toBe('second');
    expect(await first.exited).toBeNull();

    const names = hubNames(prefix);
    const jsm = await jetstreamManager(stack.nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(names.walStream, names.deliveryConsumer);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 30_000, what: 'the hub to fan every admitted envelope out' },
    );

    for (const { a, b, channel } of pairs) {
      const { envelopes, last_sequence } = await rpc.call(
        'readWal',
        { channel_id: channel, limit: 10_000 },
        { caller: a },
      );
      expect(envelopes.map((e) => e.sequence)).toEqual(Array.from({ length: last_sequence }, (_, i) => i + 1));
      const ids = envelopes.map((e) => e.envelope_id);
      expect(new Set(ids).size).toBe(ids.length);
      const texts = envelopes.filter((e) => e.event_type === EV_TEXT);
      expect(texts).toHaveLength(POSTS_PER_CHANNEL);
      for (const e of texts)
        expect(acked.get(e.envelope_id)).toEqual({ channel, sequence: e.sequence, sender: e.sender_id });

      for (const [me, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const inbox = (await drainInbox(js, prefix, me)).filter(
          (e) => e.event_type === EV_TEXT && e.channel_id === channel,
        );
        const expected = texts.filter((e) => e.sender_id === other).map((e) => e.envelope_id);
        expect(new Set(inbox.map((e) => e.envelope_id))).toEqual(new Set(expected));
      }
    }
  }, 120_000);

  it('a killed hub is replaced long before its lease expires, a paused one keeps its lease', async () => {
    // A 60 s lease: a standby that serves within the 20 s below can only have seen the holder's connection close.
    const prefix = uniqueName('pr');
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
    const first = startHubService({ natsUrl: stack.url, prefix, hubId: 'first', leaseTtlMs: 60_000 });
    stack.track(first);
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 20_000,
      what: 'the first hub to serve',
    });
    const { epoch } = await rpc.call('health', {});
    const alice = (await rpc.call('register', { passport: { name: 'alice' } })).passport.agent_id ?? '';
    const second = startHubService({ natsUrl: stack.url, prefix, hubId: 'second', leaseTtlMs: 60_000 });
    stack.track(second);
    await waitFor(() => second.output().includes('started; competing for the lease'), {
      timeoutMs: 20_000,
      what: 'the standby',
    });

    // Paused three times longer than a standby's judgement takes: its connection stays open, so it stays the holder.
    first.pause();
    await new Promise((resolve) => setTimeout(resolve, 3 * GONE_CONFIRM_MS));
    first.resume();
    const afterPause = await rpc.call('health', {}, { timeout: 5000 });
    expect(afterPause).toMatchObject({ hub_id: 'first', role: 'active', epoch });
    expect(second.output()).not.toContain('took the lease over');

    await first.stop('SIGKILL');
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'second', {
      timeoutMs: 20_000,
      what: 'the standby to take over from the killed hub',
    });
    expect(second.output()).toContain('took the lease over from a hub whose connection is gone');
    const health = await rpc.call('health', {});
    expect(health.epoch).toBeGreaterThan(epoch);
    expect((await rpc.call('getAgent', { name_or_id: 'alice' }, { caller: alice })).passport?.agent_id).toBe(alice);
    const bob = await rpc.call('register', { passport: { name: 'bob' } });
    expect(bob.passport.name).toBe('bob');
  }, 90_000);

  it('a hub paused past its lease is replaced, and while it stays paused every request reaches its successor', async () => {
    // A 3 s lease: the paused holder's key expires and the standby takes it; the paused process keeps its connection
    // and its RPC subscriptions throughout.
    const prefix = uniqueName('pp');
    const names = hubNames(prefix);
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
    const first = startHubService({ natsUrl: stack.url, prefix, hubId: 'first', leaseTtlMs: 3_000 });
    stack.track(first);
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 20_000,
      what: 'the first hub to serve',
    });
    const second = startHubService({ natsUrl: stack.url, prefix, hubId: 'second', leaseTtlMs: 3_000 });
    stack.track(second);
    await waitFor(() => second.output().includes('started; competing for the lease'), {
      timeoutMs: 20_000,
      what: 'the standby',
    });

    first.pause();
    await waitFor(() => second.output().includes('"msg":"active"'), {
      timeoutMs: 20_000,
      what: 'the standby to serve',
    });
    // One attempt each, no retry: a request the server handed to the paused hub would time out unanswered.
    const answeredBy: string[] = [];
    for (let i = 0; i < 24; i += 1) {
      const reply = await stack.nc.request(names.rpc('health'), '{}', { timeout: 2_000 }).catch(() => null);
      const body = reply === null ? null : HealthReply.safeParse(reply.json());
      answeredBy.push(body?.success === true ? body.data.result.hub_id : 'nobody');
    }
    expect(answeredBy).toEqual(Array.from({ length: 24 }, () => 'second'));

    // Woken, the deposed hub finds its lease gone and steps down; the successor keeps serving.
    first.resume();
    await waitFor(() => first.output().includes('stepped down'), {
      timeoutMs: 20_000,
      what: 'the old hub to step down',
    });
    const health = await rpc.call('health', {}, { timeout: 2_000 });
    expect(health).toMatchObject({ hub_id: 'second', role: 'active' });
  }, 90_000);
});
