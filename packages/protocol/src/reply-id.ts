import { sha256Hex } from './sha256.js';

/** Longest envelope id (`IdSchema`). */
const MAX_ID_LENGTH = 128;

/**
 * The envelope id of agent `agentId`'s answer to the envelope `triggerEnvelopeId`: deterministic, so that every
 * attempt and every replica of the agent derives the same id and the hub admits the answer once; and one-to-one, so
 * that no other (agent, trigger) pair derives it. The readable form `r-<trigger>-<agent>` is used when the agent id
 * holds no `-` (then the last `-` splits the id unambiguously) and the result fits 128 characters; otherwise the id
 * is `rh-` and the hex SHA-256 of `<trigger>\n<agent>` (64 digits). A client in any language derives it the same way.
 *
 * Ids that start with `r-` or `rh-` are reserved for replies: the hub admits such an id only from `agentId` with
 * `causation_id` = `triggerEnvelopeId` (`isReplyIdOf`), so nobody can take an agent's reply id before it answers.
 */
export function replyEnvelopeId(agentId: string, triggerEnvelopeId: string): string {
  const readable = `r-${triggerEnvelopeId}-${agentId}`;
  if (!agentId.includes('-') && readable.length <= MAX_ID_LENGTH) return readable;
  return `rh-${sha256Hex(`${triggerEnvelopeId}\n${agentId}`)}`;
}

/** True when `envelopeId` has a reply id's reserved form (`r-…` or `rh-…`). */
export function isReplyFormId(envelopeId: string): boolean {
  return envelopeId.startsWith('r-') || envelopeId.startsWith('rh-');
}

/** True when `envelopeId` is the reply id of `senderId` answering `causationId`. */
export function isReplyIdOf(envelopeId: string, senderId: string, causationId: string | null): boolean {
  return causationId !== null && causationId !== '' && envelopeId === replyEnvelopeId(senderId, causationId);
}
