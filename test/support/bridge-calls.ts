/**
 * What a person does through the bridge's HTTP API in the console's browser tests, beside what the page does: sign
 * in, open a channel, wait for a line of a channel, read a channel's log.
 */
import { EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { z } from 'zod';
import { call, openSse } from './bridge-http.js';

const SessionReply = z.object({ token: z.string() });
const ChannelReply = z.object({ channel: z.object({ channel_id: z.string(), created_at: z.string() }) });
const LogReply = z.object({ envelopes: z.array(EnvelopeSchema) });

/** Signs `name` in with `key` on the bridge at `base`; resolves with the session's token. */
export async function sessionToken(base: string, name: string, key: string): Promise<string> {
  return SessionReply.parse((await call(base, '/v1/session', { body: { name, api_key: key } })).body).token;
}

/** A channel as the bridge answered its opening. */
export interface OpenedChannel {
  readonly channelId: string;
  /** When the hub created it (ISO 8601, by the hub's clock). */
  readonly createdAt: string;
}

/**
 * Opens a channel as the token's person with `body` as `POST /v1/channels` takes it (`type`, `target`, `intent`, …),
 * which resolves once every invitee accepted. Rejects unless the bridge answers 201.
 */
export async function openChannel(
  base: string,
  token: string,
  body: Readonly<Record<string, unknown>>,
): Promise<OpenedChannel> {
  const opened = await call(base, '/v1/channels', { token, body });
  if (opened.status !== 201) {
    throw new Error(`opening a channel answered ${opened.status}: ${JSON.stringify(opened.body)}`);
  }
  const { channel } = ChannelReply.parse(opened.body);
  return { channelId: channel.channel_id, createdAt: channel.created_at };
}

/**
 * Waits on the channel's stream, as the token's person, for an envelope whose text is `text` (one already in the
 * channel included); resolves with its `created_at`.
 */
export async function untilChannelText(
  base: string,
  token: string,
  wanted: { readonly channelId: string; readonly text: string },
): Promise<string> {
  const stream = await openSse(`${base}/v1/channels/${wanted.channelId}/stream`, { authorization: `Bearer ${token}` });
  try {
    for (;;) {
      const event = await stream.next();
      const envelope = event.event === 'envelope' ? EnvelopeSchema.parse(event.data) : null;
      if (envelope?.event_data['text'] === wanted.text) return envelope.created_at;
    }
  } finally {
    stream.close();
  }
}

/** The channel's log as the token's person reads it. */
export async function channelLog(base: string, token: string, channelId: string): Promise<Envelope[]> {
  return LogReply.parse((await call(base, `/v1/channels/${channelId}/log`, { token })).body).envelopes;
}
