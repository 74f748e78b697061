import type { ChannelAdapter } from '@ag2net/adapters';
import { buildParticipants } from '@ag2net/adapters/internal';
import {
  ChannelMetadataSchema,
  ChannelState,
  EV_TEXT,
  createEnvelope,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';

export const T0 = '2026-01-01T00:00:00.000Z';

let counter = 0;

/** A hub-stamped text envelope in channel `c1` (ids and sequences in order of creation). */
export function text(sender: string, body: string, audience: string[] | null = null): Envelope {
  counter += 1;
  return createEnvelope({
    channel_id: 'c1',
    sender_id: sender,
    audience,
    event_type: EV_TEXT,
    event_data: { text: body },
    envelope_id: `e${counter}`,
    created_at: T0,
    sequence: counter,
  });
}

/** Active metadata of channel `c1` for `adapter`, built the way the hub builds it. */
export function channelFor(
  adapter: ChannelAdapter,
  creator: string,
  others: readonly string[],
  knobs: Record<string, unknown> = {},
): ChannelMetadata {
  return ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: adapter.manifest,
    creator_id: creator,
    participants: buildParticipants(creator, others, T0),
    state: ChannelState.Active,
    created_at: T0,
    knobs,
  });
}
