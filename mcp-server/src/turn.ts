import type { ChannelMetadata } from '@ag2net/protocol';

/** Whose turn it is in a channel: one participant, anyone (free chat), or nobody (and why). */
export type Turn =
  | { readonly kind: 'agent'; readonly agent_id: string }
  | { readonly kind: 'anyone' }
  | { readonly kind: 'none'; readonly why: string };

const ENDED = new Set(['closing', 'closed', 'expired']);

function roleHolder(channel: Pick<ChannelMetadata, 'participants'>, role: string): string | null {
  return channel.participants.find((p) => p.role === role)?.agent_id ?? null;
}

/**
 * The next speaker, read from a channel's adapter state the way each built-in adapter keeps it: `consulting` (the
 * initiator asks, then the respondent answers, then nobody), `discussion` and `workflow` (`expected_next_speaker`),
 * `conversation` (anyone). Another adapter: its `expected_next_speaker` when its state has one. `state` is `null`
 * when it could not be read.
 */
export function whoseTurn(
  channel: Pick<ChannelMetadata, 'state' | 'participants' | 'manifest'>,
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
    return who === null ? { kind: 'none', why: 'answered' } : { kind: 'agent', agent_id: who };
  }
  const next = state['expected_next_speaker'];
  if (typeof next === 'string' && next !== '') return { kind: 'agent', agent_id: next };
  return { kind: 'none', why: channel.manifest.type === 'workflow' ? 'finished' : 'nobody' };
}
