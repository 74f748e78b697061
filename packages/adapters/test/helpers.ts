import { expect } from 'vitest';
import {
  ChannelMetadataSchema,
  ProtocolError,
  ChannelState,
  EV_TEXT,
  createEnvelope,
  type ChannelMetadata,
  type Envelope,
  type EnvelopeInput,
} from '@ag2net/protocol';
import { buildParticipants } from '../src/participants.js';
import type { ChannelAdapter } from '../src/types.js';

export const T0 = '2026-01-01T00:00:00.000Z';

/** Active channel metadata for `adapter`, built the way the hub builds it. */
export function channelFor(
  adapter: ChannelAdapter,
  options: {
    creator: string;
    others: readonly string[];
    channelId?: string;
    knobs?: Record<string, unknown>;
  },
): ChannelMetadata {
  return ChannelMetadataSchema.parse({
    channel_id: options.channelId ?? 'c1',
    manifest: adapter.manifest,
    creator_id: options.creator,
    participants: buildParticipants(options.creator, options.others, T0),
    state: ChannelState.Active,
    created_at: T0,
    knobs: options.knobs ?? {},
  });
}

/** An admitted `EV_TEXT` envelope. */
export function text(sender: string, body: string, id: string, extra: Partial<EnvelopeInput> = {}): Envelope {
  return createEnvelope({
    channel_id: 'c1',
    sender_id: sender,
    event_type: EV_TEXT,
    event_data: { text: body },
    envelope_id: id,
    created_at: T0,
    ...extra,
  });
}

/** An admitted envelope of any type. */
export function event(sender: string, eventType: string, id: string, data: Record<string, unknown> = {}): Envelope {
  return createEnvelope({
    channel_id: 'c1',
    sender_id: sender,
    event_type: eventType,
    event_data: data,
    envelope_id: id,
    created_at: T0,
  });
}

/** Folds `log` from the channel's initial state. */
export function foldAll<S extends Readonly<Record<string, unknown>>>(
  adapter: ChannelAdapter<S>,
  metadata: ChannelMetadata,
  log: readonly Envelope[],
): S {
  return log.reduce((state, env) => adapter.fold(env, state), adapter.initialState(metadata));
}

/** Asserts that `fn` throws a `ProtocolError` whose message is exactly `message`. */
export function expectProtocolError(fn: () => unknown, message: string): void {
  let thrown: unknown = undefined;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ProtocolError);
  expect(thrown instanceof Error ? thrown.message : thrown).toBe(message);
}
