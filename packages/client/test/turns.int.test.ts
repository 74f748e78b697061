import {
  HubClient,
  HubUnavailableError,
  TurnAbortedError,
  TurnLockLostError,
  ackInvite,
  isInviteFor,
  replyEnvelopeId,
  type AgentClient,
  type AgentHandler,
} from '@ag2net/client';
import { createManualClock, startHub, type ManualClock } from '@ag2net/hub';
import { EV_CHANNEL_OPENED, EV_TEXT, ProtocolError, UnavailableError, type Envelope } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';

const nats = natsPerFile();
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

async function net(
  options: { inboxAckWaitMs?: number; clock?: ManualClock } = {},
): Promise<{ client: HubClient; prefix: string }> {
  const prefix = uniqueName('turn');
  const hub = await startHub({
    servers: nats.url,
    prefix,
    sweepIntervalMs: 0,
    ...(options.inboxAckWaitMs === undefined ? {} : { inboxAckWaitMs: options.inboxAckWaitMs }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const client = await HubClient.connect({ servers: nats.url, prefix });
  open.push(hub, client);
  return { client, prefix };
}

/** A handler that accepts invites and passes texts to `onText`. */
function onTexts(onText: (e: Envelope, self: AgentClient, signal: AbortSignal) => Promise<void>): AgentHandler {
  return async (e, self, context) => {
    if (isInviteFor(self, e)) await ackInvite(self, e);
    else if (e.event_type === EV_TEXT) await onText(e, self, context.signal);
  };
}

/** Resolves never; rejects with the signal's reason once it aborts. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    signal.addEventListener(
      'abort',
      () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason })),
      { once: true },
    );
  });
}

/** Deliveries of `agentId`'s inbox neither acked nor waiting. */
async function inboxBacklog(client: HubClient, agentId: string): Promise<number> {
  const names = client.rpc.names;
  const info = await (
    await jetstreamManager(client.nc)
  ).consumers.info(names.inboxStream, names.inboxConsumer(agentId));
  return info.num_ack_pending + info.num_pending;
}

describe('turns', () => {
  it('aborts a turn whose lock was lost, hands the delivery back, and never runs two turns of the channel at once', async () => {
    // The hub's clock decides when a lock lapses: stepped by hand, the lapse happens exactly when the test says.
    const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
    const { client } = await net({ clock });
    const alice = await client.registerHuman({ name: 'alice' });
    const attempts: string[] = [];
    const reasons: unknown[] = [];
    let running = 0;
    let maxRunning = 0;
    const bob = await client.register(
      { name: 'bob' },
      {
        turnLockTtlMs: 1500,
        handler: onTexts(async (e, _self, signal) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          attempts.push(String(e.event_data['text']));
          try {
            if (attempts.length === 1) await untilAborted(signal).catch((err: unknown) => reasons.push(err));
            signal.throwIfAborted();
          } finally {
            running -= 1;
          }
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('q');
    await waitFor(() => attempts.length === 1, { what: 'the first attempt' });

    // Bob's lock lapses by the hub's clock and another replica of bob takes it: bob's next renewal finds it taken.
    clock.advance(1500);
    const lock = { channel_id: channel.channelId, holder: 'intruder' };
    const taken = await client.call('acquireTurnLock', { ...lock, ttl_ms: 1500 }, { caller: bob.agentId });
    expect(taken).toEqual({ acquired: true });
    await waitFor(() => reasons.length === 1, { what: 'the turn aborted' });
    expect(reasons[0]).toBeInstanceOf(TurnLockLostError);

    // The intruder releases the lock; the handed-back delivery then runs again, once, and is acked.
    await client.call('releaseTurnLock', lock, { caller: bob.agentId });
    await waitFor(() => attempts.length === 2, { timeoutMs: 15_000, what: 'the second attempt' });
    await waitFor(async () => (await inboxBacklog(client, bob.agentId)) === 0, { what: 'the delivery acked' });
    expect([attempts, maxRunning]).toEqual([['q', 'q'], 1]);
  });

  it('redelivers a turn whose handler throws with backoff up to the bound, then reports it and acks it', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const calls: number[] = [];
    const failures: [string, string, number][] = [];
    const bob = await client.register(
      { name: 'bob' },
      {
        maxTurnAttempts: 3,
        turnRetryBackoffMs: 50,
        onTurnFailed: ({ envelope: e, error: err, attempts }) => {
          failures.push([e.envelope_id, err instanceof Error ? err.message : 'not an error', attempts]);
        },
        handler: onTexts(() => {
          calls.push(calls.length + 1);
          return Promise.reject(new Error('the model is down'));
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const id = await channel.send('q');
    await waitFor(() => failures.length === 1, { timeoutMs: 15_000, what: 'the failure reported' });
    await waitFor(async () => (await inboxBacklog(client, bob.agentId)) === 0, { what: 'the delivery acked' });
    expect([calls, failures]).toEqual([[1, 2, 3], [[id, 'the model is down', 3]]]);
  });

  it('reports at once, with attempts = 1, a turn whose handler the hub refused with a final error, and acks it', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    let closed: () => void = () => undefined;
    const channelClosed = new Promise<void>((resolve) => (closed = resolve));
    let calls = 0;
    const failures: [string, unknown, number][] = [];
    const bob = await client.register(
      { name: 'bob' },
      {
        // Ample attempts and a short backoff: only the final error can end the turn after one run.
        maxTurnAttempts: 5,
        turnRetryBackoffMs: 10,
        onTurnFailed: ({ envelope: e, error: err, attempts }) => void failures.push([e.envelope_id, err, attempts]),
        handler: onTexts(async (e, self) => {
          calls += 1;
          await channelClosed;
          await self.send(e.channel_id, 'too late', { causationId: e.envelope_id });
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const id = await channel.send('q');
    await channel.close();
    closed();
    await waitFor(() => failures.length === 1, { timeoutMs: 15_000, what: 'the failure reported' });
    await waitFor(async () => (await inboxBacklog(client, bob.agentId)) === 0, { what: 'the delivery acked' });

    expect([calls, failures]).toEqual([1, [[id, new ProtocolError(`channel '${channel.channelId}' is closed`), 1]]]);
    expect(failures[0]?.[1]).toBeInstanceOf(ProtocolError);
  });

  it('runs again a turn whose handler threw unavailable or no hub answering, as any other retryable failure', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const runs: string[] = [];
    const failures: number[] = [];
    const bob = await client.register(
      { name: 'bob' },
      {
        turnRetryBackoffMs: 10,
        onTurnFailed: ({ attempts }) => void failures.push(attempts),
        handler: onTexts((e) => {
          const text = String(e.event_data['text']);
          runs.push(text);
          if (runs.filter((r) => r === text).length > 1) return Promise.resolve();
          return Promise.reject(
            text === 'unavailable'
              ? new UnavailableError('post could not be served now: NATS had no responder; retry')
              : new HubUnavailableError('no hub answered post within 30000 ms'),
          );
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('unavailable');
    await channel.send('no hub');
    await waitFor(() => runs.length === 4, { timeoutMs: 15_000, what: 'each turn run twice' });
    await waitFor(async () => (await inboxBacklog(client, bob.agentId)) === 0, { what: 'the deliveries acked' });
    expect([[...runs].sort(), failures]).toEqual([['no hub', 'no hub', 'unavailable', 'unavailable'], []]);
  });

  it("isMyTurn: only the trigger of the identity's turn where the hub expects it, any text in a conversation", async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const bob = await client.register({ name: 'bob' });
    const carol = await client.register({ name: 'carol' });
    const discussion = await alice.open({ type: 'discussion', target: ['bob', 'carol'] });
    const q = await discussion.send('q');
    const logOf = async (channelId: string): Promise<Map<string, Envelope>> =>
      new Map((await alice.readWal(channelId)).map((e) => [e.envelope_id, e]));
    const first = await logOf(discussion.channelId);
    const question = first.get(q);
    const opened = [...first.values()].find((e) => e.event_type === EV_CHANNEL_OPENED);
    if (question === undefined || opened === undefined) throw new Error('the discussion log lacks its first envelopes');
    // Bob's turn: the question is its trigger; carol may not speak; alice sent it; a protocol event is no turn.
    expect(
      await Promise.all([
        bob.isMyTurn(question),
        carol.isMyTurn(question),
        alice.isMyTurn(question),
        bob.isMyTurn(opened),
      ]),
    ).toEqual([true, false, false, false]);

    const b = await bob.send(discussion.channelId, 'b', { causationId: q });
    const answer = (await logOf(discussion.channelId)).get(b);
    if (answer === undefined) throw new Error("the discussion log lacks bob's answer");
    // Carol's turn now: bob's answer is its trigger; the question is not, though carol may send (canSend).
    expect(
      await Promise.all([carol.isMyTurn(answer), carol.isMyTurn(question), carol.canSend(discussion.channelId)]),
    ).toEqual([true, false, true]);
    expect(await bob.isMyTurn(question)).toBe(false);

    // A conversation expects nobody: any text of the other one may be answered.
    const conversation = await alice.open({ type: 'conversation', target: 'bob' });
    const sent = await conversation.send('t');
    const t = (await logOf(conversation.channelId)).get(sent);
    if (t === undefined) throw new Error('the conversation log lacks its text');
    expect(await Promise.all([bob.isMyTurn(t), alice.isMyTurn(t)])).toEqual([true, false]);
  });

  it('lets disconnect({ graceMs }) abort a turn still running after the grace; the next attach runs it', async () => {
    const { client, prefix } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    const reasons: unknown[] = [];
    let started = 0;
    const bob = await client.register(
      { name: 'bob' },
      {
        handler: onTexts(async (_e, _self, signal) => {
          started += 1;
          await untilAborted(signal).catch((err: unknown) => {
            reasons.push(err);
            throw err;
          });
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('q');
    await waitFor(() => started === 1, { what: 'the turn to start' });

    await bob.disconnect({ graceMs: 200 });
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(TurnAbortedError);
    expect(await bob.closed()).toBeUndefined();

    const other = await HubClient.connect({ servers: nats.url, prefix });
    open.push(other);
    const handled: string[] = [];
    await other.attach('bob', {
      handler: onTexts((e) => Promise.resolve(void handled.push(String(e.event_data['text'])))),
    });
    await waitFor(() => handled.length === 1, { what: 'the turn run by the next attach' });
    expect(handled).toEqual(['q']);
  });

  it('lets a turn that ends within the disconnect grace finish and acks it', async () => {
    const { client } = await net();
    const alice = await client.registerHuman({ name: 'alice' });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const outcomes: string[] = [];
    const bob = await client.register(
      { name: 'bob' },
      {
        handler: onTexts(async (_e, _self, signal) => {
          outcomes.push('started');
          await gate;
          outcomes.push(signal.aborted ? 'aborted' : 'finished');
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('q');
    await waitFor(() => outcomes.length === 1, { what: 'the turn to start' });
    const disconnecting = bob.disconnect({ graceMs: 20_000 });
    release();
    await disconnecting;
    expect(outcomes).toEqual(['started', 'finished']);
    await waitFor(async () => (await inboxBacklog(client, bob.agentId)) === 0, { what: 'the delivery acked' });
  });

  it('has a surviving replica answer, exactly once, the turn of a replica that died holding its lock', async () => {
    // The inbox ack wait bounds when the survivor gets the delivery, the lock TTL (default) when it may run it.
    const { client, prefix } = await net({ inboxAckWaitMs: 1500 });
    const alice = await client.registerHuman({ name: 'alice' });
    const dying = await HubClient.connect({ servers: nats.url, prefix });
    const started: string[] = [];
    await dying.register(
      { name: 'bob' },
      {
        handler: onTexts(async (e) => {
          started.push(e.envelope_id);
          await new Promise<never>(() => undefined); // stuck until the process dies
        }),
      },
    );
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const trigger = await channel.send('q');
    await waitFor(() => started.length === 1, { what: 'the doomed turn' });

    const replica = await HubClient.connect({ servers: nats.url, prefix });
    open.push(replica);
    const answered: string[] = [];
    const survivor = await replica.attach('bob', {
      handler: onTexts(async (e, self) => {
        answered.push(e.envelope_id);
        await self.sendEnvelope({
          channel_id: e.channel_id,
          event_type: EV_TEXT,
          event_data: { text: 'answer' },
          envelope_id: replyEnvelopeId(self.agentId, e.envelope_id),
          causation_id: e.envelope_id,
        });
      }),
    });
    await dying.nc.close(); // dies mid-turn: nothing released, nothing acked

    const replies = await waitFor(
      async () => {
        const log = await alice.readWal(channel.channelId);
        const found = log.filter((e) => e.sender_id === survivor.agentId && e.event_type === EV_TEXT);
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 25_000, intervalMs: 100, what: "the survivor's answer" },
    );
    await waitFor(async () => (await inboxBacklog(client, survivor.agentId)) === 0, { what: 'the delivery acked' });
    expect(replies.map((e) => [e.envelope_id, e.causation_id])).toEqual([
      [replyEnvelopeId(survivor.agentId, trigger), trigger],
    ]);
    expect(answered).toEqual([trigger]);
  });
});
