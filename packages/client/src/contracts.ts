/**
 * What the client's classes need of each other, as interfaces: `HubClient` builds participants, participants call
 * back into their hub, and channels and invites act through their participant. Each class depends on these shapes
 * rather than on the other class, so that no two modules of the client import each other (type imports included).
 */
import type {
  ChannelMetadata,
  Envelope,
  EnvelopeInput,
  Health,
  HubOp,
  HubRequest,
  HubResponse,
  Passport,
  PostAck,
  Rendered,
  Resume,
  Rule,
} from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './logger.js';
import type { CallOptions, HubCallOptions, HubRpc } from './rpc.js';

/** Options of `disconnect`. */
export interface DisconnectOptions {
  /**
   * How long turns in flight may run on before they are aborted, in ms; default `DEFAULT_DISCONNECT_GRACE_MS`
   * (10 000).
   */
  readonly graceMs?: number;
}

/** Options of `send`. */
export interface SendOptions extends CallOptions {
  /** Who may see it (agent ids); default everyone in the channel. */
  readonly audience?: readonly string[] | null;
  /** The envelope this one answers. */
  readonly causationId?: string | null;
  /** Delegation depth; default 0. */
  readonly depth?: number;
}

/** Something that can be disconnected: what a hub client tracks of each participant it made. */
export interface Disconnectable {
  disconnect(options?: DisconnectOptions): Promise<void>;
}

/**
 * The hub connection a participant belongs to (`participant.hub`): everything `HubClient` offers except registering
 * further identities. `HubClient` implements it.
 */
export interface ParticipantHub {
  readonly rpc: HubRpc;
  readonly nc: NatsConnection;
  readonly logger: Logger;
  /** The caller of operations that name one when a call does not: the identity the client is bound to, or none. */
  readonly defaultCaller: string | null;
  call<Op extends HubOp>(op: Op, request: HubRequest<Op>, options?: HubCallOptions): Promise<HubResponse<Op>>;
  getAgent(nameOrId: string, options?: CallOptions): Promise<Passport>;
  getResume(agentId: string, options?: CallOptions): Promise<Resume>;
  getRule(agentId: string, options?: CallOptions): Promise<Rule>;
  getSkill(agentId: string, options?: CallOptions): Promise<string | null>;
  findAgentId(name: string, options?: CallOptions): Promise<string | null>;
  listAgents(filter?: HubRequest<'listAgents'>, options?: CallOptions): Promise<Passport[]>;
  getChannel(channelId: string, options?: HubCallOptions): Promise<ChannelMetadata>;
  listChannels(filter?: HubRequest<'listChannels'>, options?: HubCallOptions): Promise<ChannelMetadata[]>;
  adapterState(channelId: string, options?: HubCallOptions): Promise<Record<string, unknown> | null>;
  health(options?: CallOptions): Promise<Health>;
  /** How many partitions the deployment spreads its channels over (`Health.partitions`), asked once and kept. */
  partitions(options?: CallOptions): Promise<number>;
  close(options?: DisconnectOptions): Promise<void>;
  /** @internal A participant that disconnected; a client bound to its identity closes then. Never rejects. */
  forget(participant: Disconnectable): Promise<void>;
}

/** What posts as one identity: enough to answer an invite. */
export interface Poster {
  readonly agentId: string;
  sendEnvelope(
    envelope: Omit<EnvelopeInput, 'sender_id'> & { readonly sender_id?: string },
    options?: CallOptions,
  ): Promise<PostAck>;
}

/** The participant a `Channel` acts through. */
export interface ChannelOwner extends Poster {
  readonly hub: ParticipantHub;
  send(channelId: string, content: Rendered, options?: SendOptions): Promise<string>;
  closeChannel(channelId: string, reason?: string, options?: CallOptions): Promise<ChannelMetadata>;
  getChannel(channelId: string, options?: CallOptions): Promise<ChannelMetadata>;
  readWal(channelId: string, range?: { since?: number; until?: number }, options?: CallOptions): Promise<Envelope[]>;
}
