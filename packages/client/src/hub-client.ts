import {
  ErrorReason,
  ProtocolError,
  newId,
  type ChannelMetadata,
  type Health,
  type HubOp,
  type HubRequest,
  type HubResponse,
  type Passport,
  type PassportInput,
  type Resume,
  type ResumeInput,
  type Rule,
  type RuleInput,
} from '@ag2net/protocol';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { HubRpc, type CallOptions, type HubCallOptions } from './rpc.js';
import { silentLogger, type Logger } from './logger.js';
import { AgentClient, type AgentClientOptions } from './agent-client.js';
import { HumanClient, type HumanClientOptions } from './human-client.js';
import type { DisconnectOptions, Disconnectable, ParticipantHub } from './contracts.js';

/** The hub's default `limit` of list operations. */
const DEFAULT_LIST_LIMIT = 50;

/** Options of `HubClient.connect`. */
export interface HubClientOptions {
  /** NATS server URL(s); ignored when `connection` is given. Default `nats://127.0.0.1:4222`. */
  readonly servers?: string | string[];
  /** An existing NATS connection (the client does not close it). */
  readonly connection?: NatsConnection;
  /** The hub's prefix; default `ag2`. */
  readonly prefix?: string;
  /** How long to keep retrying when no hub answers, in ms; default 30 000. */
  readonly retryForMs?: number;
  /** pino-compatible logger; default silent. */
  readonly logger?: Logger;
}

/** Options of `register`. */
export interface RegisterOptions {
  readonly resume?: ResumeInput;
  /** The agent's SKILL.md. */
  readonly skillMd?: string | null;
  readonly rule?: RuleInput | null;
}

/**
 * One connection to the hub. Registers agents and humans (each gets a participant client that consumes its durable
 * inbox), and passes the hub's read operations through. Every call takes `{ signal, timeout }`.
 */
export class HubClient implements ParticipantHub {
  readonly rpc: HubRpc;
  readonly nc: NatsConnection;
  readonly logger: Logger;
  readonly #ownsConnection: boolean;
  readonly #participants = new Set<Disconnectable>();
  #closed = false;

  private constructor(nc: NatsConnection, options: HubClientOptions, ownsConnection: boolean) {
    this.nc = nc;
    this.rpc = new HubRpc(nc, options);
    this.logger = options.logger ?? silentLogger;
    this.#ownsConnection = ownsConnection;
  }

  /** Connects to NATS (or uses `connection`) and returns a client of the hub with `prefix`. */
  static async connect(options: HubClientOptions = {}): Promise<HubClient> {
    if (options.connection !== undefined) return new HubClient(options.connection, options, false);
    const nc = await connect({ servers: options.servers ?? 'nats://127.0.0.1:4222', maxReconnectAttempts: -1 });
    return new HubClient(nc, options, true);
  }

  /** Calls any hub operation. */
  call<Op extends HubOp>(op: Op, request: HubRequest<Op>, options?: HubCallOptions): Promise<HubResponse<Op>> {
    if (this.#closed) return Promise.reject(new Error('HubClient is closed'));
    return this.rpc.call(op, request, options);
  }

  /**
   * Registers an agent-kind identity and starts consuming its inbox. A human passport is refused: use
   * `registerHuman`. The passport carries a client-minted `agent_id` so that a retried registration is recognised.
   */
  async register(
    passport: PassportInput,
    options: RegisterOptions & AgentClientOptions = {},
    call?: CallOptions,
  ): Promise<AgentClient> {
    if (passport.kind === 'human') {
      throw new TypeError(
        "register() is for agent-kind participants; use HubClient.registerHuman(...) for kind='human' passports",
      );
    }
    const stamped = await this.#registerIdentity(passport, options, call);
    return this.#track(await AgentClient.start(this, stamped, options));
  }

  /** Registers a human participant (kind `human`); invites are acked automatically unless `autoAckInvites` is false. */
  async registerHuman(
    passport: PassportInput,
    options: RegisterOptions & HumanClientOptions = {},
    call?: CallOptions,
  ): Promise<HumanClient> {
    if (passport.kind !== undefined && passport.kind !== null && passport.kind !== 'human') {
      throw new TypeError(`registerHuman() requires kind='human' (or null); got '${passport.kind}'`);
    }
    const stamped = await this.#registerIdentity({ ...passport, kind: 'human' }, options, call);
    return this.#track(await HumanClient.start(this, stamped, options));
  }

  /**
   * Reconnects to an identity registered earlier (by name) and resumes its inbox from where it was left: whatever
   * was delivered but not acked arrives again, once. An unknown name needs `passport` to register it instead.
   */
  async attach(
    name: string,
    options: RegisterOptions & AgentClientOptions & { readonly passport?: PassportInput } = {},
  ): Promise<AgentClient> {
    const id = (await this.call('findAgentId', { name })).agent_id;
    if (id === null) {
      if (options.passport === undefined) {
        throw new TypeError(
          `attach('${name}'): name is not registered; a passport is required to fall back to register()`,
        );
      }
      try {
        return await this.register({ ...options.passport, name }, options);
      } catch (err) {
        // Another replica registered the name between the lookup and the registration: attach to that identity.
        if (!(err instanceof ProtocolError) || err.details?.['reason'] !== ErrorReason.NameTaken) throw err;
        const { passport: _unused, ...rest } = options;
        return this.attach(name, rest);
      }
    }
    const { passport } = await this.call('getAgent', { name_or_id: id });
    return this.#track(await AgentClient.start(this, passport, options));
  }

  /** Reconnects to a human identity registered earlier (by name), or registers it when the name is new. */
  async attachHuman(
    name: string,
    options: RegisterOptions & HumanClientOptions & { readonly passport?: PassportInput } = {},
  ): Promise<HumanClient> {
    const id = (await this.call('findAgentId', { name })).agent_id;
    if (id === null) return this.registerHuman({ ...options.passport, name }, options);
    const { passport } = await this.call('getAgent', { name_or_id: id });
    if (passport.kind !== 'human') throw new TypeError(`attachHuman('${name}'): '${name}' is not a human identity`);
    return this.#track(await HumanClient.start(this, passport, options));
  }

  async #registerIdentity(passport: PassportInput, options: RegisterOptions, call?: CallOptions): Promise<Passport> {
    const request = {
      passport: { ...passport, agent_id: passport.agent_id ?? newId() },
      ...(options.resume === undefined ? {} : { resume: options.resume }),
      ...(options.skillMd === undefined ? {} : { skill_md: options.skillMd }),
      ...(options.rule === undefined ? {} : { rule: options.rule }),
    };
    return (await this.call('register', request, call)).passport;
  }

  #track<T extends Disconnectable>(participant: T): T {
    this.#participants.add(participant);
    return participant;
  }

  /** @internal A participant that disconnected. */
  forget(participant: Disconnectable): void {
    this.#participants.delete(participant);
  }

  getAgent(nameOrId: string, options?: CallOptions): Promise<Passport> {
    return this.call('getAgent', { name_or_id: nameOrId }, options).then((r) => r.passport);
  }

  getResume(agentId: string, options?: CallOptions): Promise<Resume> {
    return this.call('getResume', { agent_id: agentId }, options).then((r) => r.resume);
  }

  getRule(agentId: string, options?: CallOptions): Promise<Rule> {
    return this.call('getRule', { agent_id: agentId }, options).then((r) => r.rule);
  }

  getSkill(agentId: string, options?: CallOptions): Promise<string | null> {
    return this.call('getSkill', { agent_id: agentId }, options).then((r) => r.skill_md);
  }

  findAgentId(name: string, options?: CallOptions): Promise<string | null> {
    return this.call('findAgentId', { name }, options).then((r) => r.agent_id);
  }

  /** Up to `filter.limit` (default 50) agents, following the hub's page cursors. */
  async listAgents(filter: HubRequest<'listAgents'> = {}, options?: CallOptions): Promise<Passport[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    const out: Passport[] = [];
    let cursor = filter.cursor ?? null;
    do {
      const page = await this.call('listAgents', { ...filter, limit: limit - out.length, cursor }, options);
      out.push(...page.agents);
      cursor = page.next_cursor;
    } while (cursor !== null && out.length < limit);
    return out;
  }

  getChannel(channelId: string, options?: CallOptions): Promise<ChannelMetadata> {
    return this.call('getChannel', { channel_id: channelId }, options).then((r) => r.channel);
  }

  /** Up to `filter.limit` (default 50) channels, following the hub's page cursors. */
  async listChannels(filter: HubRequest<'listChannels'> = {}, options?: CallOptions): Promise<ChannelMetadata[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    const out: ChannelMetadata[] = [];
    let cursor = filter.cursor ?? null;
    do {
      const page = await this.call('listChannels', { ...filter, limit: limit - out.length, cursor }, options);
      out.push(...page.channels);
      cursor = page.next_cursor;
    } while (cursor !== null && out.length < limit);
    return out;
  }

  adapterState(channelId: string, options?: CallOptions): Promise<Record<string, unknown> | null> {
    return this.call('adapterState', { channel_id: channelId }, options).then((r) => r.state);
  }

  health(options?: CallOptions): Promise<Health> {
    return this.call('health', {}, options);
  }

  /**
   * Disconnects every participant of this client (turns in flight get `graceMs`, default 10 000, before their
   * signals abort), then closes the connection if the client opened it.
   */
  async close(options: DisconnectOptions = {}): Promise<void> {
    if (this.#closed) return;
    await Promise.all([...this.#participants].map((p) => p.disconnect(options)));
    this.#closed = true;
    if (this.#ownsConnection) await this.nc.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
