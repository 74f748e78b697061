import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  newId,
  type HubRequest,
} from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  asOperator,
  INVITE_ACK_TIMEOUT_MS,
  T0,
  at,
  failure,
  getChannel,
  inviteAck,
  oneTo,
  openChannel,
  openNet,
  post,
  readWal,
  register,
  sequences,
  types,
  waitForState,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

async function trio(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const carol = await register(net, 'carol');
  return { alice, bob, carol };
}

async function expectNoChannels(net: TestNet): Promise<void> {
  expect((await net.rpc.call('listChannels', {}, asOperator)).channels).toEqual([]);
}

describe('createChannel refuses', () => {
  it('a creator that is not registered', async () => {
    await using net = await openNet(nats.url);
    const { bob } = await trio(net);
    const ghost = newId();
    const refused = failure(
      net.rpc.call('createChannel', { type: 'conversation', participants: [bob.id] }, { caller: ghost }),
    );
    expect(await refused).toEqual({ code: 'access_denied', message: `unknown caller '${ghost}'` });
    await expectNoChannels(net);
  });

  it('a participant that is not registered', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const ghost = newId();
    const refused = failure(
      net.rpc.call('createChannel', { type: 'discussion', participants: [bob.id, ghost] }, { caller: alice.id }),
    );
    expect(await refused).toEqual({ code: 'not_found', message: `participant not registered: ${ghost}` });
    await expectNoChannels(net);
  });

  it('an empty participant list', async () => {
    await using net = await openNet(nats.url);
    const { alice } = await trio(net);
    const refused = failure(
      net.rpc.call('createChannel', { type: 'conversation', participants: [] }, { caller: alice.id }),
    );
    expect(await refused).toEqual({ code: 'protocol_error', message: 'channel requires at least one participant' });
    await expectNoChannels(net);
  });

  it('a participant listed twice', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const refused = failure(
      net.rpc.call('createChannel', { type: 'discussion', participants: [bob.id, bob.id] }, { caller: alice.id }),
    );
    expect(await refused).toEqual({ code: 'protocol_error', message: `participant listed twice: '${bob.id}'` });
    await expectNoChannels(net);
  });

  it('a channel type no adapter is registered for', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const refused = failure(
      net.rpc.call('createChannel', { type: 'debate', participants: [bob.id] }, { caller: alice.id }),
    );
    expect(await refused).toEqual({ code: 'not_found', message: "no adapter registered for 'debate'@v1" });
    await expectNoChannels(net);
  });

  it('a consulting channel with two respondents', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol } = await trio(net);
    const refused = failure(
      net.rpc.call('createChannel', { type: 'consulting', participants: [bob.id, carol.id] }, { caller: alice.id }),
    );
    expect(await refused).toEqual({ code: 'protocol_error', message: 'consulting requires exactly one respondent' });
    await expectNoChannels(net);
    expect(bob.mailbox.envelopes).toEqual([]);
  });

  it('a discussion with an ordering other than round_robin', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol } = await trio(net);
    const refused = failure(
      net.rpc.call(
        'createChannel',
        { type: 'discussion', participants: [bob.id, carol.id], knobs: { ordering: 'dynamic' } },
        { caller: alice.id },
      ),
    );
    expect(await refused).toEqual({
      code: 'protocol_error',
      message: "discussion knobs.ordering='dynamic' not supported; choose from ['round_robin']",
    });
    await expectNoChannels(net);
  });
});

describe('handshake', () => {
  it('invites every invitee once with the channel terms and opens the channel when all have acked', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol } = await trio(net);
    const channel = await openChannel(net, alice, 'discussion', [bob, carol], {
      knobs: { ordering: 'round_robin' },
      labels: { topic: 'budget' },
    });
    const cid = channel.channel_id;
    expect(cid).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(channel).toMatchObject({
      creator_id: alice.id,
      state: 'active',
      created_at: T0,
      expires_at: at(2 * 3600_000),
      closed_at: null,
      close_reason: '',
      knobs: { ordering: 'round_robin' },
      labels: { topic: 'budget' },
      pending_acks: [],
      rejected_by: [],
      participants: [
        { agent_id: alice.id, role: 'initiator', order: 0, joined_at: T0 },
        { agent_id: bob.id, role: 'participant', order: 1, joined_at: T0 },
        { agent_id: carol.id, role: 'participant', order: 2, joined_at: T0 },
      ],
    });
    expect(channel.manifest.type).toBe('discussion');

    for (const invitee of [bob, carol]) {
      await invitee.mailbox.waitFor((e) => e.channel_id === cid && e.event_type === EV_CHANNEL_OPENED, 'opened');
      const invites = invitee.mailbox.of(cid, EV_CHANNEL_INVITE);
      expect(invites).toHaveLength(1);
      expect(invites[0]).toMatchObject({ sender_id: alice.id, audience: [invitee.id] });
      expect(invites[0]?.event_data).toEqual({
        channel_id: cid,
        manifest_type: 'discussion',
        manifest_version: 1,
        creator_id: alice.id,
        knobs: { ordering: 'round_robin' },
        labels: { topic: 'budget' },
      });
    }
    const opened = await alice.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_OPENED, 'opened');
    expect(opened.event_data).toEqual({ channel_id: cid });
    expect(alice.mailbox.of(cid, EV_CHANNEL_INVITE)).toEqual([]);

    const wal = await readWal(net, alice, cid);
    expect(sequences(wal)).toEqual(oneTo(5));
    expect(wal.at(-1)?.event_type).toBe(EV_CHANNEL_OPENED);
    for (const invitee of [bob, carol]) {
      const invite = wal.find((e) => e.event_type === EV_CHANNEL_INVITE && e.audience?.includes(invitee.id));
      const ack = wal.find((e) => e.event_type === EV_CHANNEL_INVITE_ACK && e.sender_id === invitee.id);
      expect(invite).toBeDefined();
      expect(ack?.causation_id).toBe(invite?.envelope_id);
      expect(ack?.sequence).toBeGreaterThan(invite?.sequence ?? Infinity);
    }
  });

  it('logs invite, ack and opened of a two-party channel in that order, numbered 1 to 3', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const channel = await openChannel(net, alice, 'consulting', [bob]);
    const wal = await readWal(net, alice, channel.channel_id);
    expect(types(wal)).toEqual([EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK, EV_CHANNEL_OPENED]);
    expect(sequences(wal)).toEqual([1, 2, 3]);
    const [invite, ack, opened] = wal;
    expect(invite).toMatchObject({ sender_id: alice.id, audience: [bob.id], created_at: T0 });
    expect(ack).toMatchObject({ sender_id: bob.id, causation_id: invite?.envelope_id });
    expect(opened?.event_data).toEqual({ channel_id: channel.channel_id });
    expect(channel.participants.map((p) => [p.agent_id, p.role])).toEqual([
      [alice.id, 'initiator'],
      [bob.id, 'respondent'],
    ]);
  });

  it('fails the creation and closes the channel with invite_rejected when an invitee rejects', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'reject' });
    const refused = await failure(openChannel(net, alice, 'consulting', [bob]));
    const invite = await bob.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_INVITE, 'the invite');
    const cid = invite.channel_id;
    expect(refused).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' closed during handshake: invite_rejected`,
    });
    expect(await waitForState(net, cid, 'closed')).toMatchObject({
      close_reason: 'invite_rejected',
      closed_at: T0,
      pending_acks: [],
      rejected_by: [bob.id],
    });
    const wal = await readWal(net, alice, cid);
    expect(types(wal)).toEqual([EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_REJECT, EV_CHANNEL_CLOSED]);
    expect(wal[2]?.event_data).toEqual({ reason: 'invite_rejected', channel_id: cid });
    for (const agent of [alice, bob]) {
      const closed = await agent.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_CLOSED, 'closed');
      expect(closed.event_data).toEqual({ reason: 'invite_rejected', channel_id: cid });
    }
    expect((await net.rpc.call('listChannels', { state: 'active' }, asOperator)).channels).toEqual([]);
  });

  it('closes a pending channel with invite_timeout once the clock passes the ack timeout and the sweeper runs', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const creating = failure(openChannel(net, alice, 'consulting', [bob]));
    const invite = await bob.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_INVITE, 'the invite');
    const cid = invite.channel_id;

    net.clock.advance(INVITE_ACK_TIMEOUT_MS - 1);
    await net.hub.tick();
    expect(await getChannel(net, cid)).toMatchObject({ state: 'pending', pending_acks: [bob.id] });

    net.clock.advance(2);
    await net.hub.tick();
    expect(await creating).toEqual({ code: 'protocol_error', message: `channel '${cid}' ack timeout` });
    expect(await waitForState(net, cid, 'closed')).toMatchObject({
      close_reason: 'invite_timeout',
      closed_at: at(INVITE_ACK_TIMEOUT_MS + 1),
    });
    // A late ack changes nothing.
    expect(await failure(post(net, bob, inviteAck(invite, bob.id)))).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' is closed`,
    });
  });

  it('refuses an ack that someone other than the invitee posts, and keeps the channel pending', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const mallory = await register(net, 'mallory');
    const creating = openChannel(net, alice, 'consulting', [bob]);
    creating.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
    const invite = await bob.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_INVITE, 'the invite');
    const cid = invite.channel_id;

    // Mallory claims to be bob in the body while the subject says mallory: she is no participant of the channel.
    const impersonation = await failure(net.rpc.call('post', inviteAck(invite, bob.id), { caller: mallory.id }));
    expect(impersonation).toEqual({
      code: 'auth_failed',
      message: `sender_id '${bob.id}' does not match the caller '${mallory.id}'`,
    });
    // Mallory acks bob's invite in her own name.
    const foreign = await failure(net.rpc.call('post', inviteAck(invite, mallory.id), { caller: mallory.id }));
    expect(['protocol_error', 'access_denied']).toContain(foreign.code);
    // A participant that names bob as the sender while the subject says alice is refused for the mismatch.
    const claimed = await failure(net.rpc.call('post', inviteAck(invite, bob.id), { caller: alice.id }));
    expect(claimed.code).toBe('auth_failed');
    // The creator cannot ack on bob's behalf either.
    const byCreator = await failure(net.rpc.call('post', inviteAck(invite, alice.id), { caller: alice.id }));
    expect(['protocol_error', 'access_denied']).toContain(byCreator.code);

    expect(await getChannel(net, cid)).toMatchObject({ state: 'pending', pending_acks: [bob.id] });
    expect(types(await readWal(net, alice, cid))).toEqual([EV_CHANNEL_INVITE]);

    await post(net, bob, inviteAck(invite, bob.id));
    expect((await creating).state).toBe('active');
  });
});

describe('closeChannel', () => {
  it('closes with explicit_close by default and tells every participant', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const { channel_id: cid } = await openChannel(net, alice, 'conversation', [bob]);
    net.clock.advance(1_000);
    const { channel } = await net.rpc.call('closeChannel', { channel_id: cid }, { caller: bob.id });
    expect(channel).toMatchObject({
      channel_id: cid,
      state: 'closed',
      close_reason: 'explicit_close',
      closed_at: at(1_000),
    });
    expect(await getChannel(net, cid)).toEqual(channel);
    const last = (await readWal(net, alice, cid)).at(-1);
    expect(last).toMatchObject({ event_type: EV_CHANNEL_CLOSED, sequence: 4 });
    expect(last?.event_data).toEqual({ reason: 'explicit_close', channel_id: cid });
    for (const agent of [alice, bob]) {
      await agent.mailbox.waitFor((e) => e.envelope_id === last?.envelope_id, 'closed');
    }
  });

  it('records the reason it is given', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const { channel_id: cid } = await openChannel(net, alice, 'conversation', [bob]);
    const { channel } = await net.rpc.call('closeChannel', { channel_id: cid, reason: 'done' }, { caller: alice.id });
    expect(channel).toMatchObject({ state: 'closed', close_reason: 'done' });
    expect((await readWal(net, alice, cid)).at(-1)?.event_data).toEqual({ reason: 'done', channel_id: cid });
  });

  it('returns an already closed channel unchanged and logs no second close', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const { channel_id: cid } = await openChannel(net, alice, 'conversation', [bob]);
    const first = await net.rpc.call('closeChannel', { channel_id: cid, reason: 'first' }, { caller: alice.id });
    net.clock.advance(5_000);
    const second = await net.rpc.call('closeChannel', { channel_id: cid, reason: 'second' }, { caller: bob.id });
    expect(second.channel).toEqual(first.channel);
    const closes = (await readWal(net, alice, cid)).filter((e) => e.event_type === EV_CHANNEL_CLOSED);
    expect(closes).toHaveLength(1);
  });

  it('says which channel it cannot find instead of failing with an internal error', async () => {
    await using net = await openNet(nats.url);
    const { alice } = await trio(net);
    const ghost = newId();
    expect(await failure(net.rpc.call('closeChannel', { channel_id: ghost }, { caller: alice.id }))).toEqual({
      code: 'not_found',
      message: `channel not found: ${ghost}`,
    });
  });
});

describe('getChannel and listChannels', () => {
  it('getChannel returns what createChannel returned, and names an unknown channel', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await trio(net);
    const channel = await openChannel(net, alice, 'conversation', [bob]);
    expect(await getChannel(net, channel.channel_id)).toEqual(channel);
    expect(await failure(net.rpc.call('getChannel', { channel_id: 'x' }, asOperator))).toEqual({
      code: 'not_found',
      message: 'channel not found: x',
    });
  });

  it('listChannels filters by participant and state, and applies the limit', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol } = await trio(net);
    const pair = await openChannel(net, alice, 'conversation', [bob]);
    const group = await openChannel(net, alice, 'discussion', [bob, carol]);
    await net.rpc.call('closeChannel', { channel_id: pair.channel_id }, { caller: alice.id });

    const ids = async (request: HubRequest<'listChannels'>) =>
      (await net.rpc.call('listChannels', request, asOperator)).channels.map((c) => c.channel_id).sort();

    expect(await ids({})).toEqual([pair.channel_id, group.channel_id].sort());
    expect(await ids({ agent_id: carol.id })).toEqual([group.channel_id]);
    expect(await ids({ state: 'closed' })).toEqual([pair.channel_id]);
    expect(await ids({ agent_id: bob.id, state: 'active' })).toEqual([group.channel_id]);
    expect(await ids({ state: 'pending' })).toEqual([]);
    expect(await ids({ limit: 1 })).toHaveLength(1);
  });
});

describe('health', () => {
  it('reports the active role, the registered agents, the open channels and the four adapters', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol } = await trio(net);
    await openChannel(net, alice, 'discussion', [bob, carol]);
    const closed = await openChannel(net, alice, 'conversation', [bob]);
    await net.rpc.call('closeChannel', { channel_id: closed.channel_id }, { caller: alice.id });
    const health = await net.rpc.call('health', {});
    expect(health).toMatchObject({
      role: 'active',
      registered_agents: 3,
      active_channels: 1,
      adapters_loaded: 4,
    });
  });
});
