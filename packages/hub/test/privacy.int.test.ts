import { EV_CHANNEL_INVITE, visibleTo } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  asOperator,
  failure,
  openChannel,
  openNet,
  readWal,
  register,
  say,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** A round-robin discussion alice → bob → carol, and mallory outside it. */
async function discussion(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const carol = await register(net, 'carol');
  const mallory = await register(net, 'mallory');
  const cid = (await openChannel(net, alice, 'discussion', [bob, carol])).channel_id;
  return { alice, bob, carol, mallory, cid };
}

/** Every delivery an agent got is one it may see. */
function expectOnlyVisible(agent: TestAgent): void {
  const leaked = agent.mailbox.envelopes.filter((e) => !visibleTo(e, agent.id));
  expect(leaked).toEqual([]);
}

describe('audience privacy', () => {
  it('delivers an envelope addressed to bob to bob only, and keeps it out of carol’s reads', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol, cid } = await discussion(net);
    const secret = await say(net, alice, cid, 'for bob only', { audience: [bob.id] });
    await bob.mailbox.waitFor((e) => e.envelope_id === secret.envelope_id, 'the private text');

    // A later broadcast in the same channel: once carol has it, everything before it was delivered (log order).
    const barrier = await say(net, bob, cid, 'for everyone');
    await carol.mailbox.waitFor((e) => e.envelope_id === barrier.envelope_id, 'the broadcast');
    expect(carol.mailbox.has(secret.envelope_id)).toBe(false);
    expectOnlyVisible(carol);
    expectOnlyVisible(bob);

    const ids = async (reader: TestAgent) => (await readWal(net, reader, cid)).map((e) => e.envelope_id);
    expect(await ids(carol)).not.toContain(secret.envelope_id);
    expect(await ids(carol)).toContain(barrier.envelope_id);
    expect(await ids(alice)).toContain(secret.envelope_id);
    expect(await ids(bob)).toContain(secret.envelope_id);
    expect((await readWal(net, carol, cid)).every((e) => visibleTo(e, carol.id))).toBe(true);
  });

  it('shows each invitee only its own invite, in its inbox and in the log', async () => {
    await using net = await openNet(nats.url);
    const { bob, carol, cid } = await discussion(net);
    for (const invitee of [bob, carol]) {
      const invites = (await readWal(net, invitee, cid)).filter((e) => e.event_type === EV_CHANNEL_INVITE);
      expect(invites.map((e) => e.audience)).toEqual([[invitee.id]]);
      expect(invitee.mailbox.of(cid, EV_CHANNEL_INVITE).map((e) => e.audience)).toEqual([[invitee.id]]);
    }
  });

  it('does not reveal an answer through findEnvelopeByCausation to a participant outside its audience', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol, cid } = await discussion(net);
    const question = await say(net, alice, cid, 'between us', { audience: [bob.id] });
    const answer = await say(net, bob, cid, 'agreed', { audience: [alice.id], causation_id: question.envelope_id });
    const find = (reader: TestAgent) =>
      net.rpc.call(
        'findEnvelopeByCausation',
        { channel_id: cid, sender_id: bob.id, causation_id: question.envelope_id },
        { caller: reader.id },
      );
    expect((await find(alice)).envelope?.envelope_id).toBe(answer.envelope_id);
    expect((await find(carol)).envelope).toBeNull();
  });

  it('shows an agent that is not a participant no log, as if there were no channel', async () => {
    await using net = await openNet(nats.url);
    const { alice, mallory, cid } = await discussion(net);
    await say(net, alice, cid, 'broadcast to the channel');
    const noChannel = { code: 'not_found', message: `channel not found: ${cid}` };
    expect(await failure(readWal(net, mallory, cid))).toEqual(noChannel);
    const probe = net.rpc.call(
      'findEnvelopeByCausation',
      { channel_id: cid, sender_id: alice.id, causation_id: 'anything' },
      { caller: mallory.id },
    );
    expect(await failure(probe)).toEqual(noChannel);
  });

  it('refuses an audience that names someone outside the channel', async () => {
    await using net = await openNet(nats.url);
    const { alice, mallory, cid } = await discussion(net);
    const before = await readWal(net, alice, cid);
    const leak = await failure(say(net, alice, cid, 'psst', { audience: [mallory.id] }));
    expect(leak).toEqual({
      code: 'protocol_error',
      message: `audience member '${mallory.id}' is not a participant of channel '${cid}'`,
    });
    expect(await readWal(net, alice, cid)).toEqual(before);
    expect(mallory.mailbox.envelopes).toEqual([]);
  });

  it('lets nobody outside the channel close it', async () => {
    await using net = await openNet(nats.url);
    const { mallory, cid } = await discussion(net);
    const refused = await failure(net.rpc.call('closeChannel', { channel_id: cid }, { caller: mallory.id }));
    expect(refused).toEqual({
      code: 'access_denied',
      message: `'${mallory.id}' is not a participant of channel '${cid}'`,
    });
    expect((await net.rpc.call('getChannel', { channel_id: cid }, asOperator)).channel.state).toBe('active');
  });
});
