import { WalHeader } from '@ag2net/protocol/internal';
import {
  ConflictError,
  EV_TEXT,
  UnavailableError,
  createEnvelope,
  hubNames,
  newId,
  replyEnvelopeId,
  type Envelope,
} from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { Outbox } from '../src/nats/outbox.js';
import { FRESH_MAX, WalConflictError, WalWriter, walMsgId } from '../src/nats/wal.js';
import { T0, failure, openChannel, openNet, post, readWal, register, say, type TestNet } from './support.js';

const nats = natsPerFile();

/** alice and bob talk in one conversation; mallory and bob in another. */
async function twoChannels(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const mallory = await register(net, 'mallory');
  const c1 = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  const c2 = (await openChannel(net, mallory, 'conversation', [bob])).channel_id;
  return { alice, bob, mallory, c1, c2 };
}

/** A stored-looking text envelope of `channelId` by `senderId`. */
function textEnvelope(channelId: string, senderId: string, envelopeId: string, sequence: number): Envelope {
  return createEnvelope({
    envelope_id: envelopeId,
    channel_id: channelId,
    sender_id: senderId,
    event_type: EV_TEXT,
    event_data: { text: `from ${senderId}` },
    created_at: T0,
    sequence,
  });
}

describe('exactly-once admission that cannot be squatted', () => {
  it("refuses another member's post under an agent's reply id, and the agent's answer is admitted", async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, mallory, c1, c2 } = await twoChannels(net);
    const trigger = await say(net, alice, c1, 'question for bob');
    const replyId = replyEnvelopeId(bob.id, trigger.envelope_id);

    // The attack: mallory proposes bob's predictable reply id in a channel she is a member of.
    expect(
      await failure(say(net, mallory, c2, 'squat', { envelope_id: replyId, causation_id: trigger.envelope_id })),
    ).toEqual({
      code: 'invalid_request',
      message: `envelope_id '${replyId}' is reserved for an agent's reply and is not the reply id of '${mallory.id}' to causation '${trigger.envelope_id}'`,
    });

    const answer = await say(net, bob, c1, 'answer', { envelope_id: replyId, causation_id: trigger.envelope_id });
    expect(answer.envelope_id).toBe(replyId);
    const log = await readWal(net, alice, c1);
    expect(log.at(-1)).toMatchObject({
      envelope_id: replyId,
      sender_id: bob.id,
      sequence: answer.sequence,
      event_data: { text: 'answer' },
    });
    expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => i + 1));
  });

  it('never lets an id admitted in one channel block the same id in another', async () => {
    await using net = await openNet(nats.url);
    const { alice, mallory, c1, c2 } = await twoChannels(net);
    const id = newId();
    const squat = await say(net, mallory, c2, 'first here', { envelope_id: id });
    const mine = await say(net, alice, c1, 'mine', { envelope_id: id });

    expect(mine.sequence).toBe((await readWal(net, alice, c1)).length);
    expect((await readWal(net, alice, c1)).at(-1)).toMatchObject({ envelope_id: id, sender_id: alice.id });
    expect((await readWal(net, mallory, c2)).at(-1)).toMatchObject({ envelope_id: id, sender_id: mallory.id });
    expect(squat.sequence).toBe((await readWal(net, mallory, c2)).length);
  });

  it('refuses a same-channel post by another member under an id already admitted', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, c1 } = await twoChannels(net);
    const id = newId();
    await say(net, alice, c1, 'mine', { envelope_id: id });
    const before = await readWal(net, alice, c1);

    expect(await failure(say(net, bob, c1, 'taking it', { envelope_id: id }))).toEqual({
      code: 'conflict',
      message: `envelope_id '${id}' is already taken in channel '${c1}'`,
    });
    expect(await readWal(net, alice, c1)).toEqual(before);
  });

  it('answers a plain retried post with its original ack and admits it once', async () => {
    await using net = await openNet(nats.url);
    const { alice, c1 } = await twoChannels(net);
    const id = newId();
    const first = await post(net, alice, {
      channel_id: c1,
      envelope_id: id,
      event_type: EV_TEXT,
      event_data: { text: 'x' },
    });
    const again = await post(net, alice, {
      channel_id: c1,
      envelope_id: id,
      event_type: EV_TEXT,
      event_data: { text: 'x' },
    });

    expect(again).toEqual(first);
    expect((await readWal(net, alice, c1)).filter((e) => e.envelope_id === id)).toHaveLength(1);
  });
});

describe('WalWriter outcomes', () => {
  it("treats a duplicate ack that names another channel's message as a conflict", async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    using outbox = new Outbox(net.nc, undefined);
    const writer = new WalWriter(outbox, jsm, { names: net.names });
    const id = newId();
    const theirs = textEnvelope('chan-a', 'someone', newId(), 1);
    const mine = textEnvelope('chan-b', 'me', id, 1);
    // A message on channel A that carries channel B's msg id for `id` (what a stream-wide id would have allowed).
    const h = headers();
    h.set(WalHeader.Epoch, '1');
    h.set(WalHeader.Sequence, '1');
    await net.js.publish(net.names.wal('chan-a'), JSON.stringify(theirs), { msgID: walMsgId(mine), headers: h });

    const err = await writer.append(mine, { expectedLast: 0, epoch: 1, mayWrite: () => true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({
      code: 'conflict',
      message: `envelope_id '${id}' is already taken in channel 'chan-b'`,
    });
    expect(await writer.tail('chan-b')).toBeNull();
  });

  it('acks a retried append of the same envelope with the stored entry', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    using outbox = new Outbox(net.nc, undefined);
    const writer = new WalWriter(outbox, jsm, { names: net.names });
    const envelope = textEnvelope('chan-r', 'me', newId(), 1);
    const first = await writer.append(envelope, { expectedLast: 0, epoch: 3, mayWrite: () => true });
    expect(first.kind).toBe('appended');
    const seq = first.kind === 'appended' ? first.streamSeq : -1;
    const retry = await writer.append(envelope, { expectedLast: 0, epoch: 3, mayWrite: () => true }).then(
      (outcome) => outcome,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );

    // nats-server 2.9 answers a retry inside the duplicate window with a duplicate ack; newer servers check the
    // expected sequence first and answer 10071, after which the hub's catch-up (src/operations/append.ts) reads the tail and
    // finds this very envelope there.
    if (/^2\.9\./.test(net.nc.info?.version ?? '')) {
      if (retry instanceof Error) throw retry;
      expect(retry).toMatchObject({ kind: 'stored', entry: { envelope, streamSeq: seq } });
      expect(retry.kind === 'stored' ? retry.entry.epoch() : -1).toBe(3);
    } else {
      expect(retry).toBeInstanceOf(WalConflictError);
      expect(retry).toMatchObject({ channelId: 'chan-r', expectedLast: 0 });
      const tail = await writer.tail('chan-r');
      expect(tail).toMatchObject({ envelope, streamSeq: seq });
      expect(tail?.epoch()).toBe(3);
    }
  });

  it('hands each fresh append to the deliverer once, never a duplicate ack, and forgets the oldest past its bounds', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    using outbox = new Outbox(net.nc, undefined);
    const writer = new WalWriter(outbox, jsm, { names: net.names });
    const first = textEnvelope('chan-f', 'me', newId(), 1);
    const appended = await writer.append(first, { expectedLast: 0, epoch: 2, mayWrite: () => true });
    if (appended.kind !== 'appended') throw new Error(`expected a fresh append, got ${appended.kind}`);

    expect(writer.takeFresh(appended.streamSeq)).toBe(first);
    expect(writer.takeFresh(appended.streamSeq)).toBeUndefined();

    // A duplicate ack names a message this writer did not store now: the deliverer parses it from the WAL.
    const other = new WalWriter(outbox, jsm, { names: net.names });
    const retry = await other.append(first, { expectedLast: 0, epoch: 2, mayWrite: () => true }).then(
      (outcome) => outcome.kind,
      (e: unknown) => (e instanceof WalConflictError ? 'conflict' : e),
    );
    expect(retry).toBe(/^2\.9\./.test(net.nc.info?.version ?? '') ? 'stored' : 'conflict');
    expect(other.takeFresh(appended.streamSeq)).toBeUndefined();

    // Past FRESH_MAX the oldest are forgotten first; a new term forgets them all.
    let last = appended.streamSeq;
    const seqs: number[] = [];
    for (let i = 0; i < FRESH_MAX + 2; i += 1) {
      const envelope = textEnvelope('chan-g', 'me', newId(), i + 1);
      const outcome = await writer.append(envelope, {
        expectedLast: i === 0 ? 0 : last,
        epoch: 2,
        mayWrite: () => true,
      });
      if (outcome.kind !== 'appended') throw new Error(`expected a fresh append, got ${outcome.kind}`);
      last = outcome.streamSeq;
      seqs.push(last);
    }
    expect(writer.takeFresh(seqs[0] ?? -1)).toBeUndefined();
    expect(writer.takeFresh(seqs[1] ?? -1)).toBeUndefined();
    expect(writer.takeFresh(seqs[2] ?? -1)?.sequence).toBe(3);
    writer.forgetFresh();
    expect(writer.takeFresh(seqs.at(-1) ?? -1)).toBeUndefined();

    // Large envelopes are forgotten by their size too: three of about 4 KB against a bound of 10,000 characters.
    const small = new WalWriter(outbox, jsm, { names: net.names, freshMaxBytes: 10_000 });
    const large: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const envelope = { ...textEnvelope('chan-h', 'me', newId(), i + 1), event_data: { text: 'x'.repeat(4_000) } };
      const outcome = await small.append(envelope, { expectedLast: large.at(-1) ?? 0, epoch: 2, mayWrite: () => true });
      if (outcome.kind !== 'appended') throw new Error(`expected a fresh append, got ${outcome.kind}`);
      large.push(outcome.streamSeq);
    }
    expect(large.map((seq) => small.takeFresh(seq)?.sequence)).toEqual([undefined, 2, 3]);
  });

  it('appends nothing without the lease and answers unavailable', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    using outbox = new Outbox(net.nc, undefined);
    const writer = new WalWriter(outbox, jsm, { names: net.names });
    const envelope = textEnvelope('chan-l', 'me', newId(), 1);

    const err = await writer.append(envelope, { expectedLast: 0, epoch: 1, mayWrite: () => false }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ code: 'unavailable', message: 'this hub no longer holds the writer lease; retry' });
    expect(await writer.tail('chan-l')).toBeNull();
  });

  it('retries a WAL that does not answer within its budget, then answers unavailable', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    // No stream takes these subjects: every publish finds no responders, as during a stream leader election.
    using outbox = new Outbox(net.nc, undefined);
    const writer = new WalWriter(outbox, jsm, { names: hubNames('nowal') });
    let checks = 0;
    const err = await writer
      .append(textEnvelope('chan-u', 'me', newId(), 1), {
        expectedLast: 0,
        epoch: 1,
        retryBudgetMs: 400,
        mayWrite: () => {
          checks += 1;
          return true;
        },
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({
      code: 'unavailable',
      message: "the WAL did not take the append to channel 'chan-u' within 400 ms; retry",
    });
    expect(checks).toBeGreaterThan(1);
  });
});
