import type { Envelope } from '@ag2net/protocol';
import { InvalidRequestError } from '@ag2net/protocol';
import { isHistoryExpired } from '@ag2net/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Actor } from './route.js';
import { allChannels } from './channel-pages.js';
import type { SseWriter } from './sse.js';

/** Envelopes read per `readWal` call of a stream. */
const STREAM_PAGE = 200;
/** Channels a deliveries stream follows at most (the first the hub lists). */
const DELIVERY_CHANNELS = 500;

/** How a stream waits between polls: `pollMs`, or less when a delivery to the person wakes it. */
export interface StreamWait {
  readonly pollMs: number;
  readonly signal: AbortSignal;
  /** Registers a wake-up for deliveries of the person (whatever the channel); returns the unregister function. */
  readonly onDelivery: ((wake: (envelope: Envelope) => void) => () => void) | null;
}

/**
 * The ids of the channels the caller takes part in, following the hub's pages up to `DELIVERY_CHANNELS`; channels
 * whose history expired are left out, as they have no log left to read.
 */
async function channelIdsOf(actor: Actor): Promise<string[]> {
  const channels = await allChannels(actor.hub, {}, DELIVERY_CHANNELS);
  return channels.filter((c) => c.expired_at === undefined).map((c) => c.channel_id);
}

/**
 * The end of a channel's log as the caller may read it (`readWal` past the end answers only `last_sequence`); `null`
 * when its history expired since it was listed.
 */
async function lastSequence(actor: Actor, channelId: string): Promise<number | null> {
  const page = await readPage(actor, channelId, { since: Number.MAX_SAFE_INTEGER, limit: 1 });
  return page === null ? null : page.last_sequence;
}

/**
 * A page of the channel's log from `since` (`limit` envelopes, default `STREAM_PAGE`); `null` when its history
 * expired (the stream then skips the channel).
 */
async function readPage(actor: Actor, channelId: string, range: { since: number; limit?: number }) {
  try {
    return await actor.hub.call('readWal', {
      channel_id: channelId,
      since: range.since,
      limit: range.limit ?? STREAM_PAGE,
    });
  } catch (err) {
    if (isHistoryExpired(err)) return null;
    throw err;
  }
}

/**
 * The first page of a channel stream, read before the response starts so that a refusal (not a participant, no such
 * channel) is an HTTP error; `since` is the first sequence to send.
 */
export async function openChannelStream(actor: Actor, channelId: string, since: number) {
  return actor.hub.call('readWal', { channel_id: channelId, since, limit: STREAM_PAGE });
}

/**
 * Streams a channel's log from `first` (already read) on: every envelope the caller may see, in sequence order, as
 * event `envelope` with id = its sequence. A client that reconnects with `Last-Event-ID: n` gets sequence n+1 on: no
 * gap (the log is immutable and read in order) and no duplicate (nothing at or below n is sent again).
 */
export async function runChannelStream(options: {
  readonly actor: Actor;
  readonly channelId: string;
  readonly first: { envelopes: Envelope[]; last_sequence: number; next_since: number | null };
  readonly since: number;
  readonly out: SseWriter;
  readonly wait: StreamWait;
}): Promise<void> {
  const { actor, channelId, out, wait } = options;
  let page = options.first;
  let since = options.since;
  for (;;) {
    for (const envelope of page.envelopes) {
      await out.send({ id: String(envelope.sequence), event: 'envelope', data: envelope });
    }
    // A page that stopped early continues at once; a finished one waits for more past the end it saw.
    since = page.next_since ?? Math.max(since, page.last_sequence + 1);
    if (page.next_since === null) {
      const woke = await pause(wait, (e) => e.channel_id === channelId);
      if (!woke) return;
    }
    page = await actor.hub.call('readWal', { channel_id: channelId, since, limit: STREAM_PAGE });
  }
}

/** Where a deliveries stream stands: the last sequence sent (or skipped) per channel. */
const CursorSchema = z.record(z.string().max(64), z.number().int().min(0)).refine((c) => Object.keys(c).length <= 4096);

export function decodeCursor(id: string): Map<string, number> {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch (err) {
    throw new InvalidRequestError('Last-Event-ID is not a deliveries cursor', { cause: err });
  }
  const parsed = CursorSchema.safeParse(json);
  if (!parsed.success) throw new InvalidRequestError('Last-Event-ID is not a deliveries cursor');
  return new Map(Object.entries(parsed.data));
}

function encodeCursor(cursor: ReadonlyMap<string, number>): string {
  return Buffer.from(JSON.stringify(Object.fromEntries(cursor))).toString('base64url');
}

/** The starting cursor of a deliveries stream: `from: 'now'` starts each known channel at its current end. */
export async function startCursor(actor: Actor, from: 'start' | 'now'): Promise<Map<string, number>> {
  const cursor = new Map<string, number>();
  if (from === 'start') return cursor;
  for (const id of await channelIdsOf(actor)) {
    const last = await lastSequence(actor, id);
    if (last !== null) cursor.set(id, last);
  }
  return cursor;
}

/**
 * Streams the person's deliveries: the envelopes of every channel they take part in that they may see and did not
 * send, as event `envelope`. Read from the channels' logs (as the person), not from the inbox, so that every replica
 * serves the same stream and a reconnect resumes exactly: each event's id is the whole cursor (channel → last
 * sequence), and `Last-Event-ID` carries it back. A channel the cursor does not know yet starts at sequence 1 (its
 * invite included). A channel whose history expired has nothing left to send and is skipped.
 */
export async function runDeliveriesStream(options: {
  readonly actor: Actor;
  readonly agentId: string;
  readonly cursor: Map<string, number>;
  readonly out: SseWriter;
  readonly wait: StreamWait;
}): Promise<void> {
  const { actor, agentId, cursor, out, wait } = options;
  for (;;) {
    for (const id of await channelIdsOf(actor)) {
      let since = (cursor.get(id) ?? 0) + 1;
      for (;;) {
        const page = await readPage(actor, id, { since });
        if (page === null) break;
        for (const envelope of page.envelopes) {
          cursor.set(id, envelope.sequence ?? since);
          if (envelope.sender_id === agentId) continue;
          await out.send({ id: encodeCursor(cursor), event: 'envelope', data: envelope });
        }
        if (page.last_sequence > (cursor.get(id) ?? 0) && page.next_since === null) cursor.set(id, page.last_sequence);
        if (page.next_since === null) break;
        since = page.next_since;
      }
    }
    if (!(await pause(wait, () => true))) return;
  }
}

/** Waits `pollMs`, or until a matching delivery wakes it; false once the client went away. */
export async function pause(wait: StreamWait, matches: (envelope: Envelope) => boolean): Promise<boolean> {
  if (wait.signal.aborted) return false;
  const woken = new AbortController();
  const unregister = wait.onDelivery?.((e) => {
    if (matches(e)) woken.abort();
  });
  try {
    await sleep(wait.pollMs, undefined, { signal: AbortSignal.any([wait.signal, woken.signal]) });
  } catch {
    // Aborted: either woken by a delivery or the client left; the signal tells which.
  } finally {
    unregister?.();
  }
  return !wait.signal.aborted;
}
