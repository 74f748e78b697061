import { roundRobin } from '@ag2net/adapters';
import { EV_CHANNEL_CLOSED, EV_PACKET, EV_TEXT, newId } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  asOperator,
  T0,
  at,
  failure,
  getChannel,
  oneTo,
  openChannel,
  openNet,
  post,
  rawFailure,
  readWal,
  register,
  say,
  sequences,
  types,
  waitForState,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** alice asks bob in a fresh consulting channel; mallory is registered but not in it. */
async function consulting(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const mallory = await register(net, 'mallory');
  const channel = await openChannel(net, alice, 'consulting', [bob]);
  return { alice, bob, mallory, cid: channel.channel_id };
}

describe('post admission', () => {
  it('refuses a send out of turn with the adapter message and logs nothing', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await consulting(net);
    const before = await readWal(net, alice, cid);
    expect(await failure(say(net, bob, cid, 'I speak first'))).toEqual({
      code: 'protocol_error',
      message: `consulting channel '${cid}' expects first send from initiator '${alice.id}', got '${bob.id}'`,
    });
    await say(net, alice, cid, 'question');
    expect(await failure(say(net, alice, cid, 'another question'))).toEqual({
      code: 'protocol_error',
      message: `consulting channel '${cid}' expects reply from respondent '${bob.id}', got '${alice.id}'`,
    });
    const after = await readWal(net, alice, cid);
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)?.event_data).toEqual({ text: 'question' });
  });

  it('refuses a body whose sender_id is not the caller in the subject', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await consulting(net);
    const forged = { channel_id: cid, sender_id: alice.id, event_type: EV_TEXT, event_data: { text: 'as alice' } };
    expect(await failure(net.rpc.call('post', forged, { caller: bob.id }))).toEqual({
      code: 'auth_failed',
      message: `sender_id '${alice.id}' does not match the caller '${bob.id}'`,
    });
    expect(await readWal(net, alice, cid)).toHaveLength(3);
  });

  it('refuses any event from an agent that is not a participant, custom types included', async () => {
    await using net = await openNet(nats.url);
    const { alice, mallory, cid } = await consulting(net);
    expect(
      await failure(post(net, mallory, { channel_id: cid, event_type: 'acme.note', event_data: { note: 'hi' } })),
    ).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' only accepts sends from participants, got '${mallory.id}'`,
    });
    expect(await readWal(net, alice, cid)).toHaveLength(3);
  });

  it('refuses a channel protocol event written by a client', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid } = await consulting(net);
    const forged = {
      channel_id: cid,
      event_type: EV_CHANNEL_CLOSED,
      event_data: { reason: 'forged', channel_id: cid },
    };
    expect(await failure(post(net, alice, forged))).toEqual({
      code: 'protocol_error',
      message: 'ag2.channel.closed events are written by the hub',
    });
    expect((await getChannel(net, cid)).state).toBe('active');
    expect(await readWal(net, alice, cid)).toHaveLength(3);
  });

  it('refuses malformed envelopes as invalid_request and logs nothing', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid } = await consulting(net);
    const badText = await failure(post(net, alice, { channel_id: cid, event_type: EV_TEXT, event_data: { text: 42 } }));
    expect(badText.code).toBe('invalid_request');
    const subject = net.names.rpc('post', alice.id);
    const envelope = { channel_id: cid, sender_id: alice.id, event_type: EV_TEXT, event_data: { text: 'hi' } };
    expect((await rawFailure(net, subject, JSON.stringify({ ...envelope, admin: true }))).code).toBe('invalid_request');
    expect((await rawFailure(net, subject, JSON.stringify({ ...envelope, channel_id: 'a.b' }))).code).toBe(
      'invalid_request',
    );
    expect((await rawFailure(net, subject, 'not json')).code).toBe('invalid_request');
    expect(await readWal(net, alice, cid)).toHaveLength(3);
    // Still serving, and the channel still takes the question.
    expect((await say(net, alice, cid, 'question')).sequence).toBe(4);
  });

  it('names a channel it does not know', async () => {
    await using net = await openNet(nats.url);
    const { alice } = await consulting(net);
    const ghost = newId();
    expect(await failure(say(net, alice, ghost, 'hello?'))).toEqual({
      code: 'not_found',
      message: `channel not found: ${ghost}`,
    });
  });

  it('refuses a post to a closed channel', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid } = await consulting(net);
    await net.rpc.call('closeChannel', { channel_id: cid }, { caller: alice.id });
    expect(await failure(say(net, alice, cid, 'too late'))).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' is closed`,
    });
  });

  it('closes a consulting channel with consulting_complete after the reply and tells both sides', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await consulting(net);
    const question = await say(net, alice, cid, 'what is 6 x 7?');
    net.clock.advance(1_000);
    const answer = await say(net, bob, cid, '42', { causation_id: question.envelope_id });
    expect([question.sequence, answer.sequence]).toEqual([4, 5]);
    expect(answer.created_at).toBe(at(1_000));

    const closed = await waitForState(net, cid, 'closed');
    expect(closed.close_reason).toBe('consulting_complete');
    for (const agent of [alice, bob]) {
      const end = await agent.mailbox.waitFor((e) => e.channel_id === cid && e.event_type === EV_CHANNEL_CLOSED, 'end');
      expect(end.event_data).toEqual({ reason: 'consulting_complete', channel_id: cid });
    }
    const wal = await readWal(net, alice, cid);
    expect(sequences(wal)).toEqual(oneTo(6));
    expect(types(wal).slice(3)).toEqual([EV_TEXT, EV_TEXT, EV_CHANNEL_CLOSED]);
    // Bob got the question, alice the answer; nobody gets their own text back.
    expect(bob.mailbox.has(question.envelope_id)).toBe(true);
    await alice.mailbox.waitFor((e) => e.envelope_id === answer.envelope_id, 'the answer');
    expect(alice.mailbox.has(question.envelope_id)).toBe(false);
  });

  it('admits an envelope posted twice with the same id once, and answers both posts alike', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await consulting(net);
    const envelope = { channel_id: cid, event_type: EV_TEXT, event_data: { text: 'once' }, envelope_id: newId() };
    const first = await post(net, alice, envelope);
    net.clock.advance(5_000);
    // The retry arrives after the channel moved on: it must not be judged out of turn.
    const retry = await post(net, alice, envelope);
    expect(retry).toEqual(first);
    expect(first.envelope_id).toBe(envelope.envelope_id);
    const concurrent = await Promise.all([post(net, alice, envelope), post(net, alice, envelope)]);
    expect(concurrent).toEqual([first, first]);
    const copies = (await readWal(net, alice, cid)).filter((e) => e.envelope_id === envelope.envelope_id);
    expect(copies).toHaveLength(1);
    expect(copies[0]?.sequence).toBe(first.sequence);
    await bob.mailbox.waitFor((e) => e.envelope_id === envelope.envelope_id, 'the question');
    expect(bob.mailbox.envelopes.filter((e) => e.envelope_id === envelope.envelope_id)).toHaveLength(1);
  });

  it('numbers each channel 1..n without gaps under concurrent posts to two channels', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const one = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const two = (await openChannel(net, bob, 'conversation', [alice])).channel_id;
    const posts = Array.from({ length: 20 }, (_, i) =>
      say(net, i % 2 === 0 ? alice : bob, i % 4 < 2 ? one : two, `message ${i}`),
    );
    const acks = await Promise.all(posts);
    for (const cid of [one, two]) {
      const wal = await readWal(net, alice, cid);
      expect(sequences(wal)).toEqual(oneTo(13));
      expect(wal.filter((e) => e.event_type === EV_TEXT)).toHaveLength(10);
    }
    expect(new Set(acks.map((a) => a.envelope_id)).size).toBe(20);
  });
});

describe('channel queries', () => {
  it('adapterState shows the consulting state after the question', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid } = await consulting(net);
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toEqual({
      initiator_sent: false,
      respondent_replied: false,
      last_envelope_id: null,
    });
    const question = await say(net, alice, cid, 'question');
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toEqual({
      initiator_sent: true,
      respondent_replied: false,
      last_envelope_id: question.envelope_id,
    });
  });

  it('canSend is true for the expected speaker only', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, mallory, cid } = await consulting(net);
    const canSend = async (id: string) => (await net.rpc.call('canSend', { channel_id: cid }, { caller: id })).allowed;
    expect([await canSend(alice.id), await canSend(bob.id)]).toEqual([true, false]);
    // Whether a channel would take an envelope is the participants' business only: to anyone else it does not exist.
    expect(await failure(canSend(mallory.id))).toEqual({ code: 'not_found', message: `channel not found: ${cid}` });
    await say(net, alice, cid, 'question');
    expect([await canSend(alice.id), await canSend(bob.id)]).toEqual([false, true]);
    await net.rpc.call('closeChannel', { channel_id: cid }, { caller: alice.id });
    expect(await canSend(bob.id)).toBe(false);
  });

  it('pendingTurnsFor gives a fresh discussion to its creator and then the turn to the next speaker', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const cid = (await openChannel(net, alice, 'discussion', [bob, carol])).channel_id;
    const turns = async (id: string) => (await net.rpc.call('pendingTurnsFor', {}, { caller: id })).turns;

    expect(await turns(alice.id)).toEqual([{ channel_id: cid, triggering_envelope_id: null, expected_at: T0 }]);
    expect(await turns(bob.id)).toEqual([]);

    net.clock.advance(7_000);
    const opening = await say(net, alice, cid, 'let us begin');
    net.clock.advance(3_000);
    expect(await turns(bob.id)).toEqual([
      { channel_id: cid, triggering_envelope_id: opening.envelope_id, expected_at: at(7_000) },
    ]);
    expect(await turns(alice.id)).toEqual([]);
    expect(await turns(carol.id)).toEqual([]);
  });

  it('pendingTurnsFor never expects a turn in a conversation', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await say(net, alice, cid, 'hi');
    expect((await net.rpc.call('pendingTurnsFor', {}, { caller: alice.id })).turns).toEqual([]);
    expect((await net.rpc.call('pendingTurnsFor', {}, { caller: bob.id })).turns).toEqual([]);
  });

  it('findEnvelopeByCausation finds the answer a sender gave to a trigger', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const question = await say(net, alice, cid, 'ping');
    const answer = await say(net, bob, cid, 'pong', { causation_id: question.envelope_id });
    const find = (sender: string) =>
      net.rpc.call(
        'findEnvelopeByCausation',
        { channel_id: cid, sender_id: sender, causation_id: question.envelope_id },
        { caller: alice.id },
      );
    expect((await find(bob.id)).envelope).toMatchObject({
      envelope_id: answer.envelope_id,
      sequence: answer.sequence,
      sender_id: bob.id,
      causation_id: question.envelope_id,
      event_data: { text: 'pong' },
    });
    expect((await find(alice.id)).envelope).toBeNull();
    const unknown = await net.rpc.call(
      'findEnvelopeByCausation',
      { channel_id: cid, sender_id: bob.id, causation_id: newId() },
      { caller: alice.id },
    );
    expect(unknown.envelope).toBeNull();
  });
});

describe('workflow admission', () => {
  async function workflow(net: TestNet) {
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const mallory = await register(net, 'mallory');
    const graph = roundRobin([alice.id, bob.id, carol.id]).toDict();
    const cid = (await openChannel(net, alice, 'workflow', [bob, carol], { knobs: { graph } })).channel_id;
    return { alice, bob, carol, mallory, cid };
  }

  const handoff = (cid: string, target: string) => ({
    channel_id: cid,
    event_type: EV_PACKET,
    event_data: {
      routing: { kind: 'handoff', tool: 'transfer', reason: 'needs review', target },
      context_updates: { set: {}, delete: [] },
      body: 'over to you',
    },
  });

  it('refuses a handoff packet to an agent outside the channel', async () => {
    await using net = await openNet(nats.url);
    const { alice, mallory, cid } = await workflow(net);
    const before = await readWal(net, alice, cid);
    expect(await failure(post(net, alice, handoff(cid, mallory.id)))).toEqual({
      code: 'protocol_error',
      message: `workflow '${cid}' handoff target '${mallory.id}' is not a participant`,
    });
    expect(await readWal(net, alice, cid)).toEqual(before);
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toMatchObject({
      expected_next_speaker: alice.id,
      turn_count: 0,
    });
  });

  it('hands the turn to a participant named by a handoff packet, skipping the rotation', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol, cid } = await workflow(net);
    await post(net, alice, handoff(cid, carol.id));
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toMatchObject({
      expected_next_speaker: carol.id,
      turn_count: 1,
    });
    expect(await failure(say(net, bob, cid, 'my turn?'))).toEqual({
      code: 'protocol_error',
      message: `workflow '${cid}' expects '${carol.id}' to speak, got '${bob.id}'`,
    });
  });
});
