import { ensureParts, partsText, visibleTo, type Envelope, type Part } from '@ag2net/protocol';
import { defaultNameResolver, type ProjectOptions, type ViewEvent, type ViewPolicy } from './types.js';

/** One visible, renderable envelope of a projection. */
interface Item {
  readonly senderId: string;
  readonly own: boolean;
  readonly parts: readonly Part[];
}

/** The envelopes `participantId` may see and that render to at least one part, in log order. */
function rendered(wal: readonly Envelope[], options: ProjectOptions): Item[] {
  const out: Item[] = [];
  for (const envelope of wal) {
    if (!visibleTo(envelope, options.participantId)) continue;
    const parts = ensureParts(options.renderEnvelope(envelope));
    if (parts.length === 0) continue;
    out.push({ senderId: envelope.sender_id, own: envelope.sender_id === options.participantId, parts });
  }
  return out;
}

function toEvent(item: Item, named: boolean, options: ProjectOptions): ViewEvent {
  if (item.own) return { kind: 'message', ...textAndParts(item.parts) };
  const nameFor = options.nameFor ?? defaultNameResolver;
  const parts = named ? prefixed(`[${nameFor(item.senderId)}]: `, item.parts) : item.parts;
  return { kind: 'request', ...textAndParts(parts) };
}

/** An event's `text`, and its `parts` unless it is one text part (the `text` says it all). */
function textAndParts(parts: readonly Part[]): { text: string; parts?: readonly Part[] } {
  const only = parts[0];
  if (parts.length === 1 && only?.kind === 'text') return { text: only.text };
  return { text: partsText(parts), parts };
}

/** `parts` with `prefix` before the first one: joined to it when it is text, as a text part of its own otherwise. */
function prefixed(prefix: string, parts: readonly Part[]): Part[] {
  const [first, ...rest] = parts;
  if (first?.kind === 'text') return [{ kind: 'text', text: `${prefix}${first.text}` }, ...rest];
  return [{ kind: 'text', text: prefix.trimEnd() }, ...parts];
}

function transcript(name: string, named: boolean): ViewPolicy {
  return {
    name,
    project: (wal, options) => rendered(wal, options).map((item) => toEvent(item, named, options)),
  };
}

function windowed(name: string, named: boolean, recentN: number): ViewPolicy {
  if (!Number.isInteger(recentN) || recentN < 1) throw new RangeError(`recent_n must be >= 1, got ${recentN}`);
  return {
    name,
    project(wal, options) {
      const items = rendered(wal, options);
      const events = items.map((item) => toEvent(item, named, options));
      if (items.length <= recentN) return events;
      const k = items.length - recentN;
      const nameFor = named ? (options.nameFor ?? defaultNameResolver) : defaultNameResolver;
      const speakers = [...new Set(items.slice(0, k).map((item) => nameFor(item.senderId)))].sort();
      const summary = `Earlier in this channel: ${k} message${k === 1 ? '' : 's'} from ${speakers.join(', ')}.`;
      return [{ kind: 'summary', summary, eventCount: k }, ...events.slice(k)];
    },
  };
}

/** AG2's `FullTranscript`: every visible message; others' as requests, the participant's own as messages. */
export function fullTranscript(): ViewPolicy {
  return transcript('full_transcript', false);
}

/** AG2's `NamedTranscript`: the full transcript with others' messages prefixed `[name]: `. */
export function namedTranscript(): ViewPolicy {
  return transcript('named_transcript', true);
}

/**
 * AG2's `WindowedSummary`: the last `recentN` visible messages, preceded (when there were more) by a summary
 * `Earlier in this channel: k messages from <sorted sender ids>.`. Throws `RangeError` when `recentN < 1`.
 */
export function windowedSummary(recentN: number): ViewPolicy {
  return windowed('windowed_summary', false, recentN);
}

/** AG2's `NamedWindowedSummary`: the windowed summary with names in the prefix and in the summary. */
export function namedWindowedSummary(recentN: number): ViewPolicy {
  return windowed('named_windowed_summary', true, recentN);
}
