import type { ChannelMetadata, Envelope, Part, Rendered } from '@ag2net/protocol';

/**
 * One item of a participant's projected history, AG2's event types: another participant's message (`request`,
 * AG2 `ModelRequest(parts)`), the participant's own (`message`, AG2 `ModelMessage(text)`), or the summary standing in
 * for older messages (`summary`, AG2 `CompactionSummary`). A message's `parts` are what its envelope rendered to
 * (text and data, `ensureParts`), left out when it is one text part; its `text` is their text rendering
 * (`partsText`). A custom view may give `text` alone: it stands for one text part.
 */
export type ViewEvent =
  | { readonly kind: 'request'; readonly text: string; readonly parts?: readonly Part[] }
  | { readonly kind: 'message'; readonly text: string; readonly parts?: readonly Part[] }
  | { readonly kind: 'summary'; readonly summary: string; readonly eventCount: number };

/** Agent id → display name. */
export type NameResolver = (agentId: string) => string;

/** AG2's `default_name_resolver`: the id itself. */
export const defaultNameResolver: NameResolver = (agentId) => agentId;

/** What `ViewPolicy.project` needs besides the log. */
export interface ProjectOptions {
  /** Whose view: only envelopes visible to this participant are projected; theirs become `message`s. */
  readonly participantId: string;
  /** The channel, for views that depend on it; the built-in views ignore it. */
  readonly channel?: ChannelMetadata | null;
  /**
   * The envelope as the transcript shows it (text, parts or a sequence, normalised with `ensureParts`), or `null`
   * (or no parts) to leave it out: the channel adapter's `renderEnvelope`.
   */
  readonly renderEnvelope: (envelope: Envelope) => Rendered | null;
  /** Sender names for named views; default `defaultNameResolver`. */
  readonly nameFor?: NameResolver;
}

/**
 * How a participant's history is turned into LLM input (AG2's `ViewPolicy`). Implement it for a custom view;
 * the built-in ones are `fullTranscript`, `namedTranscript`, `windowedSummary` and `namedWindowedSummary`.
 */
export interface ViewPolicy {
  /** A stable name, e.g. `full_transcript`. */
  readonly name: string;
  /** The events for `wal` as `participantId` sees it, in log order. */
  project(wal: readonly Envelope[], options: ProjectOptions): readonly ViewEvent[] | Promise<readonly ViewEvent[]>;
}
