import {
  ChannelMetadataSchema,
  isTerminalChannelState,
  type ChannelMetadata,
  type ChannelState,
  type Participant,
} from '@ag2net/protocol';
import { parseJson } from '../base/parse-json.js';

/** What the index keeps of a channel: who created it, who takes part, where it is in its life. */
export interface IndexedChannel {
  readonly channel_id: string;
  readonly creator_id: string;
  readonly participants: Participant[];
  readonly state: ChannelState;
}

/**
 * Every channel of a partitioned deployment as one hub sees it from the channels bucket: the few fields that
 * operations about more than one channel need (a task's channel and its participants, a creator's open channels).
 * Fed by `HomeReplica` (a scan at start and a watch after it); each record is applied only when newer than what the
 * index holds, so the scan and the watch may overlap. It lags the owners' writes by the watch's delay: what is exact
 * for a channel is read from the partition that owns it.
 */
export class ChannelIndex {
  readonly #channels = new Map<string, { readonly channel: IndexedChannel; readonly revision: number }>();
  /** Open channels by creator. */
  readonly #openBy = new Map<string, Set<string>>();

  get size(): number {
    return this.#channels.size;
  }

  get(channelId: string): IndexedChannel | undefined {
    return this.#channels.get(channelId)?.channel;
  }

  /**
   * Applies a channel's record at `revision` (a JSON `ChannelMetadata`, or `null` when the key was deleted); an older
   * revision than the one held, and a record that does not parse or names another channel, change nothing (the
   * owner's hydrate quarantines those). Returns the indexed channel, or `undefined` when nothing changed.
   */
  apply(channelId: string, revision: number, value: string | null): IndexedChannel | undefined {
    const held = this.#channels.get(channelId);
    if (held !== undefined && held.revision >= revision) return undefined;
    if (value === null) {
      this.#forget(channelId);
      return undefined;
    }
    const parsed = parseJson(value, ChannelMetadataSchema);
    if (!parsed.ok || parsed.value.channel_id !== channelId) return undefined;
    const channel = indexed(parsed.value);
    this.#forget(channelId);
    this.#channels.set(channelId, { channel, revision });
    if (!isTerminalChannelState(channel.state)) {
      const open = this.#openBy.get(channel.creator_id) ?? new Set<string>();
      open.add(channelId);
      this.#openBy.set(channel.creator_id, open);
    }
    return channel;
  }

  /** The open channels `creatorId` created, as far as the index knows, except those `skip` says to leave out. */
  openCountBy(creatorId: string, skip: (channelId: string) => boolean): number {
    let count = 0;
    for (const id of this.#openBy.get(creatorId) ?? []) if (!skip(id)) count += 1;
    return count;
  }

  #forget(channelId: string): void {
    const held = this.#channels.get(channelId);
    if (held === undefined) return;
    this.#channels.delete(channelId);
    const open = this.#openBy.get(held.channel.creator_id);
    open?.delete(channelId);
    if (open?.size === 0) this.#openBy.delete(held.channel.creator_id);
  }
}

function indexed(m: ChannelMetadata): IndexedChannel {
  return { channel_id: m.channel_id, creator_id: m.creator_id, participants: m.participants, state: m.state };
}
