import {
  Ag2netError,
  EV_TEXT,
  ErrorCode,
  RpcReplySchema,
  createEnvelope,
  errorFromWire,
  isErrorCode,
  newId,
  type Envelope,
  type HubNames,
} from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';

/** Time one post may take before the bench counts it as failed, in ms. */
export const POST_TIMEOUT_MS = 30_000;

/**
 * The hub refused a post (with the code of its refusal, `internal` for one this version does not know), or answered
 * with something that is not a reply (`internal`).
 */
export class PostRejectedError extends Ag2netError {
  override readonly name = 'PostRejectedError';
}

/**
 * A lean client for the hot path: it sends the exact bytes the SDK (`HubRpc`) sends for a post, a complete envelope
 * with a client-minted id, but builds them from a template instead of validating each one with zod, so that the
 * load generator, which shares the machine's two cores with the hub and nats-server, costs as little as it can.
 * The reply is still parsed and checked.
 */
export class LeanPoster {
  constructor(
    private readonly nc: NatsConnection,
    private readonly names: HubNames,
  ) {}

  /** Posts `body` (see `textTemplate`) as `senderId`; resolves once the hub acked it, throws if it refused. */
  post(senderId: string, body: string): Promise<void> {
    return this.postTo(this.names.rpc('post', senderId), body);
  }

  /**
   * The subject of `senderId`'s posts into `channelId`: its partition's (`rpcIn`) when the hub's channels are spread
   * over several, the one `post` uses otherwise. Worked out once per channel, not per post.
   */
  subjectFor(senderId: string, channelId: string): string {
    return this.names.rpcIn('post', this.names.partitionOf(channelId), senderId);
  }

  /** Posts `body` on `subject` (`subjectFor`); resolves once the hub acked it, throws if it refused. */
  async postTo(subject: string, body: string): Promise<void> {
    const msg = await this.nc.request(subject, body, { timeout: POST_TIMEOUT_MS });
    const reply = RpcReplySchema.safeParse(JSON.parse(msg.string()));
    if (!reply.success) {
      throw new PostRejectedError(ErrorCode.Internal, `not an RPC reply: ${msg.string().slice(0, 200)}`);
    }
    if (!reply.data.ok) {
      const { code, message } = reply.data.error;
      throw new PostRejectedError(isErrorCode(code) ? code : ErrorCode.Internal, `${code}: ${message}`, {
        cause: errorFromWire(reply.data.error),
      });
    }
  }
}

/** The text of every benchmark post: 200 ASCII characters. */
export const BENCH_TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(5).slice(0, 200);

/** A validated text envelope from `senderId` into `channelId`; `withId` gives its wire bytes with a fresh id. */
export interface TextTemplate {
  readonly envelope: Envelope;
  withId(envelopeId?: string): { readonly id: string; readonly body: string };
}

export function textTemplate(channelId: string, senderId: string, text: string = BENCH_TEXT): TextTemplate {
  const envelope = createEnvelope({
    channel_id: channelId,
    sender_id: senderId,
    event_type: EV_TEXT,
    event_data: { text },
  });
  return {
    envelope,
    withId(envelopeId = newId()) {
      return { id: envelopeId, body: JSON.stringify({ ...envelope, envelope_id: envelopeId }) };
    },
  };
}

/** The bytes the hub stores for such an envelope once admitted (stamped id, time and sequence): the raw payload. */
export function storedPayload(template: TextTemplate): string {
  return JSON.stringify({
    ...template.envelope,
    envelope_id: newId(),
    created_at: new Date().toISOString(),
    sequence: 1,
  });
}
