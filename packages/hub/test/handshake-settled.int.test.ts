/**
 * A handshake the log settled without this hub: the invitee's ack appended by another writer (a deposed owner whose
 * late append the WAL took as the channel's correct continuation, or a writer that crashed between the ack and the
 * opening). When the ack timeout comes, the hub folds what the log holds first and opens the channel, instead of
 * closing it `invite_timeout` with every invitee's ack in its log; a cold hub opens it at hydrate.
 */
import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { WalHeader } from '@ag2net/protocol/internal';
import { EV_CHANNEL_INVITE, EV_CHANNEL_OPENED, createEnvelope, type Envelope } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import {
  INVITE_ACK_TIMEOUT_MS,
  getChannel,
  inviteAck,
  openNet,
  readWal,
  register,
  startColdHub,
  tickAfter,
  types,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** Appends bob's ack of `invite` the way another hub would have (its headers, the channel's next sequence). */
async function ackWrittenElsewhere(net: TestNet, invite: Envelope, bob: TestAgent): Promise<void> {
  const ack = { ...createEnvelope(inviteAck(invite, bob.id)), sequence: (invite.sequence ?? 0) + 1 };
  const h = headers();
  h.set(WalHeader.Epoch, String(net.hub.epoch + 1_000));
  h.set(WalHeader.Sequence, String(ack.sequence));
  await net.js.publish(net.names.wal(invite.channel_id), JSON.stringify(ack), { headers: h });
}

/** A conversation alice opens with bob, who never answers through the hub: its invite. */
async function pendingConversation(net: TestNet, alice: TestAgent, bob: TestAgent): Promise<Envelope> {
  const created = net.rpc
    .call('createChannel', { type: CONVERSATION_TYPE, participants: [bob.id] }, { caller: alice.id, timeout: 600_000 })
    .catch(() => undefined);
  void created;
  return bob.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_INVITE, 'the invite');
}

describe('a handshake settled in the log by another writer', () => {
  it('opens the channel at the ack timeout instead of closing it invite_timeout', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const invite = await pendingConversation(net, alice, bob);
    await ackWrittenElsewhere(net, invite, bob);
    await tickAfter(net, INVITE_ACK_TIMEOUT_MS);
    const channel = await getChannel(net, invite.channel_id);
    expect([channel.state, channel.close_reason, channel.pending_acks]).toEqual(['active', '', []]);
    expect(types(await readWal(net, alice, invite.channel_id))).toEqual([
      EV_CHANNEL_INVITE,
      'ag2.channel.invite.ack',
      EV_CHANNEL_OPENED,
    ]);
  });

  it('opens it at hydrate on a cold hub', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const invite = await pendingConversation(net, alice, bob);
    await net.hub.close();
    await ackWrittenElsewhere(net, invite, bob);
    await startColdHub(net);
    const channel = await getChannel(net, invite.channel_id);
    expect([channel.state, channel.pending_acks]).toEqual(['active', []]);
    expect(types(await readWal(net, alice, invite.channel_id)).at(-1)).toBe(EV_CHANNEL_OPENED);
  });
});
