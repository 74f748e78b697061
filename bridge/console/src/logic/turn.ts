import type { Channel, Envelope } from '../api-types.js';
import { EV_PACKET, EV_TEXT } from '@ag2net/protocol';

/** Whose turn it is in a channel: one participant, anyone (free chat), or nobody (ended, waiting for acks, done). */
export type Turn =
  | { readonly kind: 'agent'; readonly agentId: string }
  | { readonly kind: 'anyone' }
  | { readonly kind: 'none'; readonly why: string };

const ENDED = new Set(['closing', 'closed', 'expired']);

function roleHolder(channel: Pick<Channel, 'participants'>, role: string): string | null {
  return channel.participants.find((p) => p.role === role)?.agent_id ?? null;
}

/**
 * Reads the next speaker from a channel's adapter state, per adapter: `consulting` (the initiator asks, then the
 * respondent answers, then nobody), `discussion` and `workflow` (`expected_next_speaker`, `null` once a workflow
 * terminated), `conversation` (anyone, any time). An adapter this console does not know: `expected_next_speaker`
 * when its state has one, else nobody in particular. `state` is `null` when the caller may not see it.
 */
export function whoseTurn(
  channel: Pick<Channel, 'state' | 'participants' | 'manifest'>,
  state: Readonly<Record<string, unknown>> | null,
): Turn {
  if (ENDED.has(channel.state)) return { kind: 'none', why: channel.state };
  if (channel.state === 'pending') return { kind: 'none', why: 'waiting for invitees' };
  if (channel.manifest.type === 'conversation') return { kind: 'anyone' };
  if (state === null) return { kind: 'none', why: 'unknown' };
  if (channel.manifest.type === 'consulting') {
    const who =
      state['initiator_sent'] !== true
        ? roleHolder(channel, 'initiator')
        : state['respondent_replied'] !== true
          ? roleHolder(channel, 'respondent')
          : null;
    return who === null ? { kind: 'none', why: 'answered' } : { kind: 'agent', agentId: who };
  }
  const next = state['expected_next_speaker'];
  if (typeof next === 'string' && next !== '') return { kind: 'agent', agentId: next };
  return { kind: 'none', why: channel.manifest.type === 'workflow' ? 'finished' : 'nobody' };
}

/** The turn as the channel list and header say it: a name, `you`, `anyone`, or why nobody. */
export function turnLabel(turn: Turn, nameOf: (id: string) => string, me: string | null): string {
  switch (turn.kind) {
    case 'agent':
      return turn.agentId === me ? 'you' : nameOf(turn.agentId);
    case 'anyone':
      return 'anyone';
    case 'none':
      return `— (${turn.why})`;
  }
}

/**
 * The adapter state as read, caught up with what the log alone says: in a consulting channel a message from the
 * initiator means it asked and one from the respondent that it answered, so a state read just before those envelopes
 * arrived does not show the turn behind the transcript. Other adapters' states are returned as read.
 */
export function stateAfterLog(
  channel: Pick<Channel, 'participants' | 'manifest'>,
  state: Readonly<Record<string, unknown>> | null,
  envelopes: readonly Pick<Envelope, 'event_type' | 'sender_id'>[],
): Readonly<Record<string, unknown>> | null {
  if (channel.manifest.type !== 'consulting') return state;
  const spoke = (role: string): boolean => {
    const who = roleHolder(channel, role);
    return envelopes.some((e) => e.sender_id === who && (e.event_type === EV_TEXT || e.event_type === EV_PACKET));
  };
  const asked = spoke('initiator');
  const answered = spoke('respondent');
  if (state === null && !asked) return null;
  return {
    ...state,
    initiator_sent: state?.['initiator_sent'] === true || asked,
    respondent_replied: state?.['respondent_replied'] === true || answered,
  };
}
