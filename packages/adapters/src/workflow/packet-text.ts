import { repr } from '@ag2net/protocol/internal';
import { EV_CONTEXT_SET, createEnvelope, type Envelope } from '@ag2net/protocol';
import { isRecord } from './records.js';

/** Input of `buildContextSetEnvelope`. */
export interface ContextSetOptions {
  /** Variables to set (after the deletes); default none. */
  readonly set?: Readonly<Record<string, unknown>>;
  /** Variables to delete (missing ones are ignored); default none. */
  readonly delete?: readonly string[];
}

/**
 * An `EV_CONTEXT_SET` envelope `{set, delete}` (both keys always written): the counterpart of AG2's
 * `set_context`/`delete_context`. Any participant may send one at any time; it does not take a turn.
 */
export function buildContextSetEnvelope(channelId: string, senderId: string, options: ContextSetOptions): Envelope {
  return createEnvelope({
    channel_id: channelId,
    sender_id: senderId,
    event_type: EV_CONTEXT_SET,
    event_data: { set: { ...options.set }, delete: [...(options.delete ?? [])] },
  });
}

/**
 * An `EV_PACKET` as transcript text: `[Handed off via <tool>] <reason>` (trimmed) for a handoff, then the body,
 * joined by a newline; `null` when both are empty.
 */
export function renderPacket(envelope: Envelope): string | null {
  const { routing, body } = readPacket(envelope);
  const parts: string[] = [];
  if (routing['kind'] === 'handoff') {
    const line = `[Handed off via ${text(routing['tool'], '')}] ${text(routing['reason'], '')}`.trim();
    if (line !== '') parts.push(line);
  }
  if (body !== '') parts.push(body);
  return parts.length > 0 ? parts.join('\n') : null;
}

/**
 * An `EV_PACKET` as the next speaker's prompt. Like `renderPacket`, except that a missing tool reads `handoff` and
 * an empty reason leaves no trailing space (`[Handed off via x]`), as AG2 has it; `""` when both are empty.
 */
export function packetTurnText(envelope: Envelope): string {
  const { routing, body } = readPacket(envelope);
  const parts: string[] = [];
  if (routing['kind'] === 'handoff') {
    const tool = text(routing['tool'], 'handoff');
    const reason = text(routing['reason'], '');
    parts.push(reason === '' ? `[Handed off via ${tool}]` : `[Handed off via ${tool}] ${reason}`);
  }
  if (body !== '') parts.push(body);
  return parts.join('\n');
}

function readPacket(envelope: Envelope): { routing: Record<string, unknown>; body: string } {
  const routing = envelope.event_data['routing'];
  const body = envelope.event_data['body'];
  return { routing: isRecord(routing) ? routing : {}, body: typeof body === 'string' ? body : '' };
}

/** A routing field as AG2 prints it: absent → `fallback`, a string as is, anything else as Python's `str()`. */
function text(value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  return typeof value === 'string' ? value : repr(value);
}
