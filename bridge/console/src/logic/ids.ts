import type { ChannelMetadata } from '@ag2net/protocol';

/**
 * The distinguishing end of an id: its last 6 characters. Hub ids are ULIDs, whose first 10 characters are a
 * timestamp, so ids made close together share their start and differ in the random end.
 */
export function shortId(id: string): string {
  return id.length > 8 ? `…${id.slice(-6)}` : id;
}

/** What naming a channel reads of it. */
export type ChannelNaming = Pick<ChannelMetadata, 'channel_id' | 'labels'> & {
  readonly manifest: Pick<ChannelMetadata['manifest'], 'type'>;
};

/** How a list names a channel: its intent label when it has one, else its type and the end of its id. */
export function channelLabel(channel: ChannelNaming): string {
  const intent = (channel.labels['intent'] ?? '').trim();
  if (intent !== '') return intent;
  return `${channel.manifest.type} ${shortId(channel.channel_id)}`;
}

/** An id as the hub writes them (a ULID), anywhere in a text. */
const ULID = /\b[0-9A-HJKMNP-TV-Z]{26}\b/g;

/**
 * A hub message with the ids it names replaced by names: `nameOf` answers `null` for an id it does not know (that
 * id stays as written, so that nothing is renamed wrongly — a channel's id, say).
 */
export function nameIds(message: string, nameOf: (id: string) => string | null): string {
  return message.replace(ULID, (id) => nameOf(id) ?? id);
}
