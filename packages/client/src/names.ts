import { newId } from '@ag2net/protocol';

/**
 * The envelope id of an agent's answer to a trigger: the same for every attempt, so that when a turn is redelivered
 * (a runner died mid-turn, a replica raced) the hub admits the answer once and acks every retry alike. The hub
 * reserves these ids for the agent answering that trigger (see `replyEnvelopeId` in @ag2net/protocol).
 */
export { replyEnvelopeId } from '@ag2net/protocol';

/** A fresh envelope id for an envelope that answers nothing. */
export function freshEnvelopeId(): string {
  return newId();
}
