import { ParticipantRole, type Participant } from '@ag2net/protocol';

/**
 * The participant list of a new channel as AG2's hub builds it: the creator first as initiator; the other side
 * of a two-party channel as respondent; everyone in a larger channel as participant. `order` is the position.
 */
export function buildParticipants(creatorId: string, invitees: readonly string[], joinedAt: string): Participant[] {
  const ids = [creatorId, ...invitees.filter((id) => id !== creatorId)];
  return ids.map((agentId, order) => ({
    agent_id: agentId,
    role:
      order === 0
        ? ParticipantRole.Initiator
        : ids.length === 2
          ? ParticipantRole.Respondent
          : ParticipantRole.Participant,
    order,
    joined_at: joinedAt,
  }));
}
