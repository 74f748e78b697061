import type { ChannelManifest, ChannelMetadata, Envelope, Rendered } from '@ag2net/protocol';
import {
  defaultBuildPacketEnvelope,
  defaultBuildRoundEnvelope,
  defaultBuildTextEnvelope,
  defaultExtractTurnInput,
  defaultRenderEnvelope,
} from './defaults.js';
import type {
  AdapterResult,
  AdapterState,
  ChannelAdapter,
  ExpectedTurn,
  PacketOptions,
  RoundInput,
  TextOptions,
  ToolSpec,
  ViewSpec,
} from './types.js';

/**
 * A channel protocol with AG2's defaults: a subclass writes the hub side (`initialState`, `fold`, `validateCreate`,
 * `validateSend`, `onAccepted`; `expectedNext` defaults to nobody, `stateFor` to the whole state) and its
 * `defaultViewPolicy`, and inherits the rest of the agent side: text envelopes, text rendering, no tools. Subclasses
 * override what their protocol does differently.
 */
export abstract class BaseChannelAdapter<S extends AdapterState> implements ChannelAdapter<S> {
  abstract readonly manifest: ChannelManifest;

  abstract initialState(metadata: ChannelMetadata): S;
  abstract fold(envelope: Envelope, state: S): S;
  abstract validateCreate(metadata: ChannelMetadata): void;
  abstract validateSend(metadata: ChannelMetadata, envelope: Envelope, state: S): void;
  abstract onAccepted(metadata: ChannelMetadata, envelope: Envelope, state: S): AdapterResult;
  abstract defaultViewPolicy(metadata: ChannelMetadata, participantId: string): ViewSpec;

  expectedNext(_metadata: ChannelMetadata, _state: S): ExpectedTurn | null {
    return null;
  }

  /**
   * The whole state: the base protocols' states hold turn structure and envelope ids only, no content of an
   * envelope. A protocol whose state carries content must override this.
   */
  stateFor(state: S, _participantId: string): S {
    return state;
  }

  extractTurnInput(envelope: Envelope): Rendered | null {
    return defaultExtractTurnInput(envelope);
  }

  renderEnvelope(envelope: Envelope): Rendered | null {
    return defaultRenderEnvelope(envelope);
  }

  buildTextEnvelope(channelId: string, senderId: string, options: TextOptions): Envelope {
    return defaultBuildTextEnvelope(channelId, senderId, options);
  }

  buildPacketEnvelope(channelId: string, senderId: string, options: PacketOptions): Envelope {
    return defaultBuildPacketEnvelope(channelId, senderId, options);
  }

  buildRoundEnvelope(input: RoundInput<S>): Envelope | null {
    return defaultBuildRoundEnvelope(input);
  }

  toolsFor(_metadata: ChannelMetadata, _state: S | null, _participantId: string): readonly ToolSpec[] {
    return [];
  }
}
