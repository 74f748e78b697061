import {
  HUB_OPS,
  OPERATOR_CALLER,
  newId,
  type DeliveryLag,
  type Health,
  type HubOp,
  type HubRequest,
  type HubResponse,
  type Passport,
  type PassportInput,
} from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { AgentClient, type AgentClientOptions } from './agent-client.js';
import { attachIdentity, type AttachHost, type Grant as GrantOf } from './attach-identity.js';
import { CredentialSource, openConnection, serverOf } from './connection.js';
import type { DisconnectOptions, Disconnectable, ParticipantHub } from './contracts.js';
import { createIdentityKeys } from './credentials.js';
import { HubReads } from './hub-reads.js';
import { checkPartitionCount } from './partition-routing.js';
import { hubRoster, type RosterOptions } from './hub-roster.js';
import { HumanClient, type HumanClientOptions } from './human-client.js';
import { issuedIdentity, type IdentityCredentials, type IdentityGrant } from './identity.js';
import { silentLogger, type Logger } from './logger.js';
import { runRenewal } from './renewal.js';
import { HubRpc, type CallOptions, type HubCallOptions } from './rpc.js';
import { combineDeliveryLags, partitionRange } from './scatter.js';

/** The longest and shortest wait of one renewal attempt, in ms (a quarter of what the credentials have left). */
const RENEWAL_ATTEMPT_MAX_MS = 10_000;
const RENEWAL_ATTEMPT_MIN_MS = 250;
import {
  credentialsOf,
  type AttachOptions,
  type HubClientOptions,
  type RegisterOptions,
} from './hub-client-options.js';

/** How a `HubClient` is made: over its own connection or a shared one, bound to an identity or not. */
interface HubClientInit {
  readonly nc: NatsConnection;
  readonly options: HubClientOptions;
  readonly ownsConnection: boolean;
  /** Where identity connections go. */
  readonly servers: string | string[];
  /** Whether the connection authenticated with credentials (the deployment is secured). */
  readonly secured: boolean;
  readonly defaultCaller: string | null;
  /** The client that registered the identity this client is bound to. */
  readonly parent: HubClient | null;
}

/**
 * One connection to the hub. Registers agents and humans and passes the hub's read operations through. Every
 * identity runs on a hub client bound to it (`participant.hub`, whose default caller is the identity): on a hub that
 * issues credentials, over the identity's own NATS connection authenticated with its own key (renewed before
 * expiry); on an unsecured hub, over this client's connection. Every call takes `{ signal, timeout }`.
 */
export class HubClient extends HubReads implements ParticipantHub {
  readonly rpc: HubRpc;
  readonly nc: NatsConnection;
  readonly logger: Logger;
  /** The caller of operations that name one when the call does not: a bound identity, `$operator`, or none. */
  readonly defaultCaller: string | null;
  readonly #init: HubClientInit;
  readonly #participants = new Set<Disconnectable>();
  /** Aborts when this client closes: stops the credential renewal of a bound identity. */
  readonly #stop = new AbortController();
  #closing: Promise<void> | null = null;

  private constructor(init: HubClientInit) {
    super();
    this.nc = init.nc;
    this.rpc = new HubRpc(init.nc, init.options);
    this.logger = init.options.logger ?? silentLogger;
    this.defaultCaller = init.defaultCaller;
    this.#init = init;
  }

  /**
   * Connects to NATS (or uses `connection`) and returns a client of the hub with `prefix`. With `creds` (or `jwt` and
   * `seed`) the connection authenticates as that user and its reply inbox is the one the JWT allows.
   */
  static async connect(options: HubClientOptions = {}): Promise<HubClient> {
    if (options.partitions !== undefined) checkPartitionCount(options.partitions);
    const defaultCaller = options.operator === true ? OPERATOR_CALLER : null;
    if (options.connection !== undefined) {
      const servers = serverOf(options.connection);
      // A server that asks for authentication runs a secured deployment, whoever authenticated this connection.
      const secured = options.connection.info?.auth_required === true;
      return new HubClient({
        nc: options.connection,
        options,
        ownsConnection: false,
        servers,
        secured,
        defaultCaller,
        parent: null,
      });
    }
    const credentials = await credentialsOf(options);
    const servers = options.servers ?? 'nats://127.0.0.1:4222';
    const nc = await openConnection({
      servers,
      source: credentials === null ? null : new CredentialSource(credentials),
    });
    return new HubClient({
      nc,
      options,
      ownsConnection: true,
      servers,
      secured: credentials !== null,
      defaultCaller,
      parent: null,
    });
  }

  /** Calls any hub operation; an op whose subject carries the caller is made as `defaultCaller` unless told. */
  call<Op extends HubOp>(op: Op, request: HubRequest<Op>, options?: HubCallOptions): Promise<HubResponse<Op>> {
    if (this.#closing !== null) return Promise.reject(new Error('HubClient is closed'));
    const caller = options?.caller ?? this.defaultCaller;
    const withCaller = HUB_OPS[op].caller && caller !== null ? { ...options, caller } : options;
    return this.rpc.call(op, request, withCaller);
  }

  /**
   * How many partitions the deployment spreads its channels over: `HubClientOptions.partitions`, else asked of the
   * hub (`health`) once and kept (see `HubRpc.partitions`).
   */
  partitions(options?: CallOptions): Promise<number> {
    if (this.#closing !== null) return Promise.reject(new Error('HubClient is closed'));
    return this.rpc.partitions(options);
  }

  /**
   * Every hub of the prefix, active and standbys, each with its own `Health` (active first, then by hub id), as
   * collected within `timeout` (default 1 s). Operator connections only: others get `AccessDeniedError`.
   */
  hubs(options: RosterOptions = {}): Promise<Health[]> {
    return hubRoster(this.nc, this.rpc.names, { ...options, logger: this.logger });
  }

  /**
   * How far the hub's delivery lags behind admission (`DeliveryLag`; `null` before it ever provisioned). The
   * `deliveryLag` operation, as `$operator`: operator connections only, others get `AccessDeniedError`. In a
   * deployment of several partitions each partition delivers its own channels; every one is asked and the answers
   * combined: `pending` and `ack_pending` summed, `oldest_pending_age_seconds` the largest, `null` when every
   * partition's is; `options.partition` asks that partition only.
   */
  async deliveryLag(options?: HubCallOptions): Promise<DeliveryLag | null> {
    const call = { ...options, caller: OPERATOR_CALLER };
    if (options?.partition !== undefined) return (await this.call('deliveryLag', {}, call)).delivery;
    const partitions = await this.partitions(options);
    if (partitions === 1) return (await this.call('deliveryLag', {}, call)).delivery;
    const replies = await Promise.all(
      partitionRange(partitions).map((partition) => this.call('deliveryLag', {}, { ...call, partition })),
    );
    return combineDeliveryLags(replies.map((r) => r.delivery));
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
    const grant = await this.#registerIdentity(passport, options, call);
    return this.#start(grant, (hub, p) => AgentClient.start(hub, p, options));
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
    const grant = await this.#registerIdentity({ ...passport, kind: 'human' }, options, call);
    return this.#start(grant, (hub, p) => HumanClient.start(hub, p, options));
  }

  /**
   * Reconnects to an identity registered earlier (by name) and resumes its inbox from where it was left: whatever
   * was delivered but not acked arrives again, once. On a secured deployment that takes the identity's own
   * credentials (`credsPath`, persisted when it registered; fresh ones are asked for with the `attach` operation when
   * they expired). A name that is not registered yet needs `passport` to register it instead.
   */
  async attach(name: string, options: AttachOptions & AgentClientOptions = {}): Promise<AgentClient> {
    const grant = await attachIdentity(this.#attachHost(), name, { options, how: { human: false, raced: false } });
    return this.#start(grant, (hub, p) => AgentClient.start(hub, p, options));
  }

  /** Reconnects to a human identity registered earlier (by name), or registers it when the name is new. */
  async attachHuman(name: string, options: AttachOptions & HumanClientOptions = {}): Promise<HumanClient> {
    const grant = await attachIdentity(this.#attachHost(), name, { options, how: { human: true, raced: false } });
    if (grant.passport.kind !== 'human') {
      await grant.hub.close();
      throw new TypeError(`attachHuman('${name}'): '${name}' is not a human identity`);
    }
    return this.#start(grant, (hub, p) => HumanClient.start(hub, p, options));
  }

  async #registerIdentity(passport: PassportInput, options: RegisterOptions, call?: CallOptions): Promise<Grant> {
    const keys = createIdentityKeys();
    const request = {
      passport: { ...passport, agent_id: passport.agent_id ?? newId() },
      ...(options.resume === undefined ? {} : { resume: options.resume }),
      ...(options.skillMd === undefined ? {} : { skill_md: options.skillMd }),
      ...(options.rule === undefined ? {} : { rule: options.rule }),
      public_key: keys.publicKey,
    };
    const reply = await this.call('register', request, call);
    return this.#bind(await issuedIdentity(reply, { seed: keys.seed, credsPath: options.credsPath }));
  }

  /** What attaching to an identity needs of this client (see `attachIdentity`). */
  #attachHost(): AttachHost<HubClient> {
    return {
      secured: this.#init.secured,
      logger: this.logger,
      call: (op, request, options) => this.call(op, request, options),
      findAgentId: (name, options) => this.findAgentId(name, options),
      bind: (identity) => this.#bind(identity),
      openIdentity: (agentId, name, credentials) => this.#openIdentity(agentId, name, credentials),
      registerIdentity: (passport, options) => this.#registerIdentity(passport, options),
    };
  }

  /** A hub client bound to the identity of `identity`: over its own connection when it has credentials. */
  async #bind(identity: IdentityGrant): Promise<Grant> {
    const agentId = identity.passport.agent_id;
    if (agentId === null) throw new TypeError('the hub answered an unstamped passport');
    if (identity.credentials === null) {
      const hub = new HubClient({
        nc: this.nc,
        options: this.#init.options,
        ownsConnection: false,
        servers: this.#init.servers,
        secured: this.#init.secured,
        defaultCaller: agentId,
        parent: this,
      });
      return { passport: identity.passport, hub };
    }
    const hub = await this.#openIdentity(agentId, identity.passport.name, identity.credentials);
    return { passport: identity.passport, hub };
  }

  /** Opens the identity's own connection with its credentials and keeps them renewed while the client lives. */
  async #openIdentity(agentId: string, name: string, credentials: IdentityCredentials): Promise<HubClient> {
    const source = new CredentialSource(credentials.user);
    const nc = await openConnection({
      servers: this.#init.servers,
      source,
      inboxPrefix: credentials.inboxPrefix,
      name: `ag2net ${name}`,
    });
    const hub = new HubClient({
      nc,
      options: this.#init.options,
      ownsConnection: true,
      servers: this.#init.servers,
      secured: true,
      defaultCaller: agentId,
      parent: this,
    });
    // The loop ends when the hub client closes or its connection closes for good; it never rejects.
    void nc.closed().then(() => hub.#stop.abort());
    void runRenewal({
      lifetime: credentials.lifetime,
      signal: hub.#stop.signal,
      logger: this.logger,
      agent: name,
      agentId,
      renew: async ({ expiresAtMs }) => {
        // One attempt waits at most a quarter of what is left of the lifetime (the renewal loop retries): a request
        // lost while the connection reconnects must not use up the time the credentials have left.
        const timeout = Math.min(
          RENEWAL_ATTEMPT_MAX_MS,
          Math.max(RENEWAL_ATTEMPT_MIN_MS, (expiresAtMs - Date.now()) / 4),
        );
        const { credentials: fresh } = await hub.call('renewCredentials', {}, { timeout, retryForMs: timeout });
        const renewed = { jwt: fresh.jwt, seed: credentials.user.seed };
        source.update(renewed);
        await credentials.persist(renewed, this.logger);
        return { expiresAtMs: Date.parse(fresh.expires_at) };
      },
    });
    return hub;
  }

  /** Starts the participant of `grant` on its bound hub client; closes that client when the start fails. */
  async #start<T extends Disconnectable>(
    grant: Grant,
    start: (hub: HubClient, passport: Passport) => Promise<T>,
  ): Promise<T> {
    let participant: T;
    try {
      participant = await start(grant.hub, grant.passport);
    } catch (err) {
      await grant.hub.close();
      throw err;
    }
    this.#participants.add(participant);
    grant.hub.#participants.add(participant);
    return participant;
  }

  /**
   * @internal A participant that disconnected. A client bound to that identity then closes too (its own
   * connection, its renewal); never rejects.
   */
  async forget(participant: Disconnectable): Promise<void> {
    this.#participants.delete(participant);
    const parent = this.#init.parent;
    if (parent === null) return;
    await parent.forget(participant);
    if (this.#participants.size === 0) {
      await this.close().catch((err: unknown) => this.logger.warn({ err }, 'closing an identity connection failed'));
    }
  }

  /**
   * Disconnects every participant of this client (turns in flight get `graceMs`, default 10 000, before their
   * signals abort), then closes the connection if the client opened it. Idempotent.
   */
  close(options: DisconnectOptions = {}): Promise<void> {
    this.#closing ??= this.#closeNow(options);
    return this.#closing;
  }

  async #closeNow(options: DisconnectOptions): Promise<void> {
    await Promise.all([...this.#participants].map((p) => p.disconnect(options)));
    this.#stop.abort();
    if (this.#init.ownsConnection && !this.nc.isClosed()) await this.nc.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** A registered identity and the hub client bound to it. */
type Grant = GrantOf<HubClient>;
