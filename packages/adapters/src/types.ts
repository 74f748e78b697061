import type { ChannelManifest, ChannelMetadata, ChannelState, Envelope, Rendered } from '@ag2net/protocol';

/** An adapter's per-channel state: a plain, JSON-serialisable object, rebuilt by folding the channel's log. */
export type AdapterState = Readonly<Record<string, unknown>>;

/** What the hub does after admitting an envelope: nothing, or move the channel to `closing`/`closed`. */
export interface AdapterResult {
  /** `null` keeps the channel's state. `closing` and `closed` both end the channel; the hub drains first. */
  readonly nextState: ChannelState | null;
  /** The close reason recorded on the channel, e.g. `consulting_complete`. */
  readonly autoCloseReason: string;
}

/** The result that changes nothing. */
export const NO_TRANSITION: AdapterResult = Object.freeze({
  nextState: null,
  autoCloseReason: '',
});

/** Whose turn it is, and the envelope that made it their turn (`null` for an opening turn). */
export interface ExpectedTurn {
  readonly agentId: string;
  readonly triggeringEnvelopeId: string | null;
}

/**
 * How a participant's history is projected into LLM input; the agent runtime implements each view.
 * Windowed views keep the last `recentN` envelopes and summarise the rest; named views prefix other speakers.
 */
export type ViewSpec =
  | { readonly name: 'full_transcript' }
  | { readonly name: 'named_transcript' }
  | { readonly name: 'windowed_summary'; readonly recentN: number }
  | { readonly name: 'named_windowed_summary'; readonly recentN: number };

/** A JSON Schema object describing a tool's parameters. */
export type JsonSchemaObject = Readonly<Record<string, unknown>>;

/** A tool an adapter offers to a participant's LLM, declared as data; the agent runtime binds the behaviour. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
}

/** An event of an LLM turn that an adapter reads to build the round envelope. */
export type TurnEvent =
  | {
      readonly type: 'tool_call';
      /** Id of this call, matched by its result's `callId`. */
      readonly callId: string;
      readonly name: string;
      /** The call's arguments as the model wrote them (a JSON string). */
      readonly arguments: string;
    }
  | {
      readonly type: 'tool_result';
      readonly callId: string;
      /** What the tool returned; a `Handoff` or `Finish` steers a workflow. */
      readonly result: unknown;
    };

/** The final reply of an LLM turn. */
export interface TurnReply {
  readonly body: string;
}

/** Options of `buildTextEnvelope` and `buildPacketEnvelope`. */
export interface EnvelopeOptions {
  /** Who may see the envelope; `null` or absent is everyone. */
  readonly audience?: readonly string[] | null;
  /** The envelope this one answers. */
  readonly causationId?: string | null;
}

/** Input of `buildPacketEnvelope`. */
export interface PacketOptions extends EnvelopeOptions {
  readonly body: string;
  /** Hand the turn to this agent (an id, or a name that `buildRoundEnvelope` resolves). */
  readonly handoff?: {
    readonly target: string;
    readonly reason?: string;
  } | null;
  /** Context variables to set, written as `context_updates.set`. */
  readonly contextSet?: Readonly<Record<string, unknown>> | null;
  /** Context variables to delete, written as `context_updates.delete`. */
  readonly contextDelete?: readonly string[] | null;
}

/** Input of `buildRoundEnvelope`: everything the turn produced. */
export interface RoundInput<S extends AdapterState = AdapterState> {
  readonly metadata: ChannelMetadata;
  readonly senderId: string;
  readonly reply: TurnReply;
  readonly events: readonly TurnEvent[];
  readonly state: S;
  /** Passport name → agent id, to resolve handoff targets written as names. */
  readonly nameToId: ReadonlyMap<string, string>;
}

/**
 * The protocol of one channel type, in three layers: what the hub calls (state, validation, transitions), what
 * clients use to build and read envelopes, and the tools it offers to LLM participants.
 *
 * Hub-called methods are pure: deterministic functions of their arguments with no clock, I/O or randomness, and
 * they never mutate their arguments. Validation methods throw `ProtocolError` to reject.
 */
export interface ChannelAdapter<S extends AdapterState = AdapterState> {
  readonly manifest: ChannelManifest;

  /** The state of a freshly created channel. Throws `ProtocolError` on bad knobs. */
  initialState(metadata: ChannelMetadata): S;
  /** The state after `envelope`; never throws, unknown event types leave the state as it is. */
  fold(envelope: Envelope, state: S): S;
  /** Rejects a channel that this protocol cannot run (participants, roles, knobs). */
  validateCreate(metadata: ChannelMetadata): void;
  /** Rejects `envelope` given the state before it (wrong turn, finished channel, bad handoff). */
  validateSend(metadata: ChannelMetadata, envelope: Envelope, state: S): void;
  /** What happens to the channel once `envelope` is admitted, given the state after it. */
  onAccepted(metadata: ChannelMetadata, envelope: Envelope, state: S): AdapterResult;
  /** Whose turn it is, or `null` when nobody is expected. */
  expectedNext(metadata: ChannelMetadata, state: S): ExpectedTurn | null;
  /**
   * The state as `participantId` may see it (what the hub's `adapterState` answers a participant): nothing an
   * envelope outside the participant's audience carried may show through. The turn structure (whose turn, who spoke
   * last, how many turns, who is hidden) belongs to the channel and stays; content an envelope carried (context
   * variables, a close reason it chose) is left out or shown as it was before. Pure, like the hub-called methods.
   */
  stateFor(state: S, participantId: string): S;
  /** The view a participant's LLM sees the channel through. */
  defaultViewPolicy(metadata: ChannelMetadata, participantId: string): ViewSpec;

  /**
   * What an LLM turn starts from (AG2's `Rendered`: text, parts, or a sequence of them; `ensureParts` normalises it),
   * or `null` when the envelope should not start a turn.
   */
  extractTurnInput(envelope: Envelope): Rendered | null;
  /** The envelope as the transcript shows it to an LLM (text, parts, or a sequence), or `null` when it has none. */
  renderEnvelope(envelope: Envelope): Rendered | null;
  /** A plain text envelope. */
  buildTextEnvelope(channelId: string, senderId: string, text: string, options?: EnvelopeOptions): Envelope;
  /** A packet envelope (workflow routing, context updates, body). */
  buildPacketEnvelope(channelId: string, senderId: string, options: PacketOptions): Envelope;
  /** The envelope that ends an LLM turn, or `null` for a silent round. */
  buildRoundEnvelope(input: RoundInput<S>): Envelope | null;

  /** The tools `participantId`'s LLM gets in this channel now. */
  toolsFor(metadata: ChannelMetadata, state: S | null, participantId: string): readonly ToolSpec[];
}
