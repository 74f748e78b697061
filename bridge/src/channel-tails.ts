import {
  AccessDeniedError,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_OPENED,
  EV_EXPECTATION_VIOLATED,
  EV_PACKET,
  EV_TEXT,
  NotFoundError,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';
import { z } from 'zod';
import type { ActivityReplySchema, ChannelPreviewSchema } from './api-schemas.js';
import type { ActorHub } from './route.js';

// What the console shows beside a channel and an agent, read from the end of channel logs as the caller may read
// them: each channel's last message (its preview) and each agent's newest envelope (when it was last seen). The
// bridge keeps no state, so both are read per request, from a bounded number of channels and envelopes.

/** Envelopes read from the end of a channel's log (those the caller may see among them). */
export const TAIL_ENVELOPES = 20;
/** Channels of one list page given a preview: the most recently created. */
export const MAX_PREVIEWS = 100;
/** Channels read for the activity: the live ones first, then the most recently ended. */
export const ACTIVITY_CHANNELS = 50;
/** An agent is online while its newest envelope the caller can see is at most this old, in seconds. */
export const ONLINE_WINDOW_SECONDS = 300;
/** Characters of a message's text a preview carries. */
export const PREVIEW_TEXT_CHARS = 280;
/** Tails read at once by one request. */
const PARALLEL_READS = 8;

/**
 * Events the hub writes in the opener's name (the channel opened, closed or expired, an expectation broken): they say
 * nothing of when the opener was last there.
 */
const HUB_EVENTS: ReadonlySet<string> = new Set([
  EV_CHANNEL_OPENED,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_EXPECTATION_VIOLATED,
]);

interface Tail {
  readonly channelId: string;
  /** The channel's last sequence (every envelope, seen or not). */
  readonly lastSequence: number;
  /** The envelopes among the last `TAIL_ENVELOPES` that the caller may see, in log order. */
  readonly envelopes: readonly Envelope[];
}

/**
 * The end of a channel's log as the caller may read it: a read past the end answers the last sequence without
 * reading any envelope, then one page of the last `TAIL_ENVELOPES`. `null` when the caller may no longer read it.
 */
async function readTail(hub: ActorHub, channelId: string): Promise<Tail | null> {
  try {
    const end = await hub.call('readWal', { channel_id: channelId, since: Number.MAX_SAFE_INTEGER, limit: 1 });
    if (end.last_sequence === 0) return { channelId, lastSequence: 0, envelopes: [] };
    const since = Math.max(1, end.last_sequence - TAIL_ENVELOPES + 1);
    const page = await hub.call('readWal', { channel_id: channelId, since, limit: TAIL_ENVELOPES });
    return { channelId, lastSequence: Math.max(end.last_sequence, page.last_sequence), envelopes: page.envelopes };
  } catch (err) {
    // Listed a moment ago, gone now (or no longer the caller's): it has nothing to show.
    if (err instanceof NotFoundError || err instanceof AccessDeniedError) return null;
    throw err;
  }
}

/** `readTail` of each channel, `PARALLEL_READS` at a time, in the order given. */
async function readTails(hub: ActorHub, channelIds: readonly string[]): Promise<Tail[]> {
  const tails: (Tail | null)[] = new Array<Tail | null>(channelIds.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < channelIds.length) {
      const i = next++;
      const id = channelIds[i];
      if (id !== undefined) tails[i] = await readTail(hub, id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, channelIds.length) }, worker));
  return tails.filter((t): t is Tail => t !== null);
}

const StringField = z.string();

/** The words of a text (`text`) or a packet (`body`), cut to `PREVIEW_TEXT_CHARS`. */
function messageText(envelope: Envelope): string {
  const field = envelope.event_type === EV_TEXT ? 'text' : 'body';
  const parsed = StringField.safeParse(envelope.event_data[field]);
  const text = parsed.success ? parsed.data : '';
  return text.length <= PREVIEW_TEXT_CHARS ? text : `${text.slice(0, PREVIEW_TEXT_CHARS - 1)}…`;
}

function isMessage(envelope: Envelope): boolean {
  return envelope.event_type === EV_TEXT || envelope.event_type === EV_PACKET;
}

/** A channel's preview from its tail: its last message the caller may see, and when the last envelope was admitted. */
function previewOf(tail: Tail): z.output<typeof ChannelPreviewSchema> {
  const last = tail.envelopes.at(-1);
  const message = tail.envelopes.findLast(isMessage);
  return {
    last_sequence: tail.lastSequence,
    last_activity_at: last === undefined || last.created_at === '' ? null : last.created_at,
    last_message:
      message === undefined
        ? null
        : {
            sequence: message.sequence ?? 0,
            sender_id: message.sender_id,
            event_type: message.event_type,
            text: messageText(message),
            created_at: message.created_at,
          },
  };
}

/**
 * Previews of the `MAX_PREVIEWS` most recently created of `channels`, by channel id (a channel left out, one whose
 * history expired, or one the caller may no longer read, has none).
 */
export async function channelPreviews(
  hub: ActorHub,
  channels: readonly ChannelMetadata[],
): Promise<Record<string, z.output<typeof ChannelPreviewSchema>>> {
  const newest = withHistory(channels)
    .sort((a, b) => b.created_at.localeCompare(a.created_at))
    .slice(0, MAX_PREVIEWS);
  const tails = await readTails(
    hub,
    newest.map((c) => c.channel_id),
  );
  return Object.fromEntries(tails.map((t) => [t.channelId, previewOf(t)]));
}

/** The channels that still have a log to read: those whose history expired have no tail (nor a preview). */
function withHistory(channels: readonly ChannelMetadata[]): ChannelMetadata[] {
  return channels.filter((c) => c.expired_at === undefined);
}

/** Live channels first (newest first), then ended ones by when they ended. */
function byRecency(a: ChannelMetadata, b: ChannelMetadata): number {
  const live = (c: ChannelMetadata): number => (c.closed_at === null ? 1 : 0);
  const when = (c: ChannelMetadata): string => c.closed_at ?? c.created_at;
  return live(b) - live(a) || when(b).localeCompare(when(a));
}

/**
 * When each agent was last seen: its newest envelope among the tails of the caller's `ACTIVITY_CHANNELS` most recent
 * channels (events the hub writes in an opener's name do not count), online when that is at most
 * `ONLINE_WINDOW_SECONDS` before `nowMs`. Agents seen in none of them are not listed.
 */
export async function agentActivity(
  hub: ActorHub,
  channels: readonly ChannelMetadata[],
  nowMs: number,
): Promise<z.output<typeof ActivityReplySchema>> {
  const recent = withHistory(channels).sort(byRecency).slice(0, ACTIVITY_CHANNELS);
  const tails = await readTails(
    hub,
    recent.map((c) => c.channel_id),
  );
  const seen = new Map<string, { at: number; created_at: string; channel_id: string }>();
  for (const tail of tails) {
    for (const envelope of tail.envelopes) {
      if (HUB_EVENTS.has(envelope.event_type)) continue;
      const at = Date.parse(envelope.created_at);
      if (Number.isNaN(at)) continue;
      const known = seen.get(envelope.sender_id);
      if (known === undefined || at > known.at) {
        seen.set(envelope.sender_id, { at, created_at: envelope.created_at, channel_id: tail.channelId });
      }
    }
  }
  return {
    as_of: new Date(nowMs).toISOString(),
    online_window_seconds: ONLINE_WINDOW_SECONDS,
    channels_read: tails.length,
    agents: [...seen]
      .sort(([, a], [, b]) => b.at - a.at)
      .map(([agentId, s]) => ({
        agent_id: agentId,
        last_seen_at: s.created_at,
        channel_id: s.channel_id,
        online: nowMs - s.at <= ONLINE_WINDOW_SECONDS * 1000,
      })),
  };
}
