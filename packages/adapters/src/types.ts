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

/** Input of `buildTextEnvelope`. */
export interface TextOptions extends EnvelopeOptions {
  /** The text, written as `event_data.text`. */
  readonly text: string;
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
 * The hub's side of a channel protocol: the state, validation and transitions the hub applies to every envelope of a
 * channel of this type. The hub calls these and nothing else (through the `AdapterLookup<HubAdapter>` it is given);
 * so do other readers of a channel's turn structure, such as the MCP server's `whoseTurn`.
 *
 * Every method is pure: a deterministic function of its arguments with no clock, I/O or randomness, that never
 * mutates its arguments, so a cold hub folding a channel's log reproduces the live state exactly. Validation methods
 * throw `ProtocolError` to reject.
 */
export interface HubAdapter<S extends AdapterState = AdapterState> {
  /** The channel type and version this protocol runs, and what it declares (expectations, violations). */
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
   * variables, a close reason it chose) is left out or shown as it was before.
   */
  stateFor(state: S, participantId: string): S;
}

/**
 * The agent's side of a channel protocol: how a participant reads the channel (its view, the transcript, what starts
 * a turn), what it writes (text, packet and round envelopes) and which tools its LLM gets. The agent runtime calls
 * these and nothing else (through the `AdapterLookup<AgentAdapter>` it is given); the hub never does.
 *
 * Methods run in the agent's process on what the hub delivered and answered; they do no I/O. A throwing `toolsFor`
 * is logged by the default handler and offers no tools.
 */
export interface AgentAdapter<S extends AdapterState = AdapterState> {
  /** The channel type and version this protocol runs. */
  readonly manifest: ChannelManifest;

  /** The view a participant's LLM sees the channel through (the handler's `view` option may replace it). */
  defaultViewPolicy(metadata: ChannelMetadata, participantId: string): ViewSpec;
  /**
   * What an LLM turn starts from (AG2's `Rendered`: text, parts, or a sequence of them; `ensureParts` normalises it),
   * or `null` when the envelope should not start a turn.
   */
  extractTurnInput(envelope: Envelope): Rendered | null;
  /** The envelope as the transcript shows it to an LLM (text, parts, or a sequence), or `null` when it has none. */
  renderEnvelope(envelope: Envelope): Rendered | null;
  /** A plain text envelope (the `say` tool's). */
  buildTextEnvelope(channelId: string, senderId: string, options: TextOptions): Envelope;
  /** A packet envelope (workflow routing, context updates, body). */
  buildPacketEnvelope(channelId: string, senderId: string, options: PacketOptions): Envelope;
  /** The envelope that ends an LLM turn, or `null` for a silent round. */
  buildRoundEnvelope(input: RoundInput<S>): Envelope | null;
  /** The tools `participantId`'s LLM gets in this channel now; `state` is what `adapterState` answered it. */
  toolsFor(metadata: ChannelMetadata, state: S | null, participantId: string): readonly ToolSpec[];
}

/**
 * The protocol of one channel type, both sides: what a protocol implements and what an `AdapterRegistry` holds. The
 * hub is handed its `HubAdapter` side and the agent runtime its `AgentAdapter` side; no method is called by both.
 * `BaseChannelAdapter` supplies AG2's defaults for the agent side, so a custom protocol writes the hub side and its
 * view, and overrides the rest only where it differs.
 */
export interface ChannelAdapter<S extends AdapterState = AdapterState> extends HubAdapter<S>, AgentAdapter<S> {}

/**
 * Finds a channel type's adapter by `(type, version)`. `AdapterRegistry` is one: the hub takes it as an
 * `AdapterLookup<HubAdapter>` and the agent runtime as an `AdapterLookup<AgentAdapter>`, each seeing only its side.
 */
export interface AdapterLookup<TAdapter> {
  /** The adapter for `(type, version)`, or `undefined`. */
  find(type: string, version: number): TAdapter | undefined;
  /** The adapter for `(type, version)`; throws `NotFoundError` when there is none. */
  get(type: string, version: number): TAdapter;
}
