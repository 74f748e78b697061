import { ConversationAdapter } from '@ag2net/adapters';
import { buildParticipants } from '@ag2net/adapters/internal';
import { WalHeader } from '@ag2net/protocol/internal';
import {
  ChannelMetadataSchema,
  ChannelState,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_OPENED,
  EV_TEXT,
  createEnvelope,
  newId,
  type ChannelMetadata,
  type Envelope,
  type HubNames,
} from '@ag2net/protocol';
import { DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { headers, type NatsConnection } from '@nats-io/transport-node';

/** The shape of a history written straight into a hub's streams. */
export interface SyntheticHistorySpec {
  /** Conversation channels still active at the end. */
  readonly openChannels: number;
  /** Conversation channels that ended (their last entry is `ag2.channel.closed`). */
  readonly closedChannels: number;
  /** WAL entries per channel: invite, ack, opened, texts (and the close of an ended channel). At least 4. */
  readonly envelopesPerChannel: number;
}

/** What was written. */
export interface SyntheticHistory {
  readonly open: readonly ChannelMetadata[];
  readonly closed: number;
  readonly walMessages: number;
}

/** Messages published before the writer waits for the server to store them: bounded memory on both sides. */
const WINDOW = 20_000;

/**
 * Writes a hub's history fast, as a hub of epoch 1 would have written it, without going through a hub: channel
 * metadata into the channels bucket, and every channel's envelopes straight onto its WAL subject with the hub's
 * headers (`Ag2-Epoch`, `Ag2-Sequence`), the channels' entries interleaved round by round as concurrent channels
 * interleave in a real WAL. Published without waiting for each ack (the stream stores what reaches it in order;
 * the writer waits for the count every `WINDOW` messages). Then the hub's delivery consumer is placed after the
 * last entry, as if the hub had delivered everything, so that a hub started on it does not fan out the history.
 *
 * The hub's streams and buckets must exist (start and stop a hub on the prefix first) and the WAL be empty.
 */
export async function writeSyntheticHistory(
  nats: { readonly nc: NatsConnection; readonly jsm: JetStreamManager; readonly names: HubNames },
  spec: SyntheticHistorySpec,
): Promise<SyntheticHistory> {
  const { nc, jsm, names } = nats;
  const channels = await kvMetadata(nats, spec);
  const restoreDelivery = await deliveryConsumerAside(jsm, names);
  const per = Math.max(4, spec.envelopesPerChannel);
  let published = 0;
  const base = (await jsm.streams.info(names.walStream)).state.messages;
  for (let step = 0; step < per; step += 1) {
    for (const metadata of channels) {
      const envelope = entry(metadata, step, per);
      const h = headers();
      h.set(WalHeader.Epoch, '1');
      h.set(WalHeader.Sequence, String(step + 1));
      nc.publish(names.wal(metadata.channel_id), JSON.stringify(envelope), { headers: h });
      published += 1;
      if (published % WINDOW === 0) await stored(jsm, names, base + published);
    }
  }
  await stored(jsm, names, base + published);
  await restoreDelivery();
  return {
    open: channels.filter((m) => m.state === ChannelState.Active),
    closed: spec.closedChannels,
    walMessages: published,
  };
}

/** The channels' metadata as the hub persists it at the end of the history, written into the channels bucket. */
async function kvMetadata(
  nats: { readonly nc: NatsConnection; readonly names: HubNames },
  spec: SyntheticHistorySpec,
): Promise<ChannelMetadata[]> {
  const { manifest } = new ConversationAdapter();
  const kv = await new Kvm(nats.nc).open(nats.names.channelsBucket);
  const total = spec.openChannels + spec.closedChannels;
  const createdAt = '2026-01-01T00:00:00.000Z';
  const channels = Array.from({ length: total }, (_, i) => {
    const creator = newId();
    const invitee = newId();
    const ended = i >= spec.openChannels;
    return ChannelMetadataSchema.parse({
      channel_id: newId(),
      manifest,
      creator_id: creator,
      participants: buildParticipants(creator, [invitee], createdAt),
      state: ended ? ChannelState.Closed : ChannelState.Active,
      created_at: createdAt,
      knobs: {},
      ...(ended ? { closed_at: createdAt, close_reason: 'explicit_close' } : {}),
    });
  });
  for (let i = 0; i < channels.length; i += 500) {
    await Promise.all(channels.slice(i, i + 500).map((m) => kv.put(m.channel_id, JSON.stringify(m))));
  }
  return channels;
}

/** One validated envelope of each kind the history holds; the rest are copies with their own fields (fast). */
const TEMPLATES = {
  invite: createEnvelope({ channel_id: 'c', sender_id: 'a', event_type: EV_CHANNEL_INVITE, event_data: {} }),
  ack: createEnvelope({ channel_id: 'c', sender_id: 'a', event_type: EV_CHANNEL_INVITE_ACK, event_data: {} }),
  opened: createEnvelope({ channel_id: 'c', sender_id: 'a', event_type: EV_CHANNEL_OPENED, event_data: {} }),
  closed: createEnvelope({ channel_id: 'c', sender_id: 'a', event_type: EV_CHANNEL_CLOSED, event_data: {} }),
  text: createEnvelope({ channel_id: 'c', sender_id: 'a', event_type: EV_TEXT, event_data: {} }),
};

/** The channel's envelope at `step` of `per`: invite, ack, opened, then texts in turn; an ended channel's last closes. */
function entry(metadata: ChannelMetadata, step: number, per: number): Envelope {
  const [creator = '', invitee = ''] = metadata.participants.map((p) => p.agent_id);
  const channelId = metadata.channel_id;
  const own = {
    channel_id: channelId,
    envelope_id: newId(),
    created_at: new Date(Date.parse('2026-01-01T00:00:00.000Z') + step * 1_000).toISOString(),
    sequence: step + 1,
  };
  if (step === 0) return { ...TEMPLATES.invite, ...own, sender_id: creator };
  if (step === 1) return { ...TEMPLATES.ack, ...own, sender_id: invitee };
  if (step === 2) return { ...TEMPLATES.opened, ...own, sender_id: creator, event_data: { channel_id: channelId } };
  if (metadata.state === ChannelState.Closed && step === per - 1) {
    const data = { reason: 'explicit_close', channel_id: channelId };
    return { ...TEMPLATES.closed, ...own, sender_id: creator, event_data: data };
  }
  const data = { text: `message ${step} of a long conversation` };
  return { ...TEMPLATES.text, ...own, sender_id: step % 2 === 1 ? creator : invitee, event_data: data };
}

/** Waits until the WAL holds `count` messages. */
async function stored(jsm: JetStreamManager, names: HubNames, count: number): Promise<void> {
  for (let waited = 0; ; waited += 1) {
    const { messages } = (await jsm.streams.info(names.walStream)).state;
    if (messages >= count) return;
    if (waited > 6_000) throw new Error(`the WAL holds ${messages} of ${count} messages after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Takes the hub's delivery consumer away while the history is written (a durable consumer over the whole WAL would
 * make the server account every message for it) and returns what puts it back after the last entry, with the hub's
 * own settings.
 */
async function deliveryConsumerAside(jsm: JetStreamManager, names: HubNames): Promise<() => Promise<void>> {
  const { config } = await jsm.consumers.info(names.walStream, names.deliveryConsumer);
  await jsm.consumers.delete(names.walStream, names.deliveryConsumer);
  return async () => {
    const last = (await jsm.streams.info(names.walStream)).state.last_seq;
    await jsm.consumers.add(names.walStream, {
      ...config,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: last + 1,
    });
  };
}
