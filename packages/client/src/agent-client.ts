import {
  EV_TASK_CANCEL_REQUEST,
  TaskCancelDataSchema,
  isProtocolEvent,
  newId,
  type Envelope,
  type Passport,
} from '@ag2net/protocol';
import { jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { HubClient } from './hub-client.js';
import { ackInvite, isInviteFor } from './invites.js';
import { Participant } from './participant.js';
import { TurnLocks } from './turn-locks.js';

/** Called when a cancel request for a task arrives: the task id, the reason, the request envelope. */
export type TaskCancelListener = (taskId: string, reason: string, request: Envelope) => void;

/** What an agent does with a delivery. Runs in order per channel; channels run in parallel. */
export type AgentHandler = (envelope: Envelope, client: AgentClient) => Promise<void>;

/** Options of an agent participant. */
export interface AgentClientOptions {
  /** The delivery handler; default: accept invites, ignore everything else. `onEnvelope` replaces it. */
  readonly handler?: AgentHandler;
  /**
   * Take a cross-replica lock per (agent, channel) around each turn, so that replicas hosting the same agent never
   * run two turns of one channel at once. Default true.
   */
  readonly exclusiveTurns?: boolean;
  /** Lock time of a crashed replica's turn, in ms, when this client creates the hub's lock bucket; default 120 000. */
  readonly turnLockTtlMs?: number;
}

/**
 * An agent on the network: consumes its durable inbox and hands each delivery to its handler (the LLM runtime's
 * default handler, or your own). Every envelope is also queued for `nextEnvelope`/`envelopes()`.
 */
export class AgentClient extends Participant {
  #handler: AgentHandler;
  #locks: TurnLocks | null = null;
  readonly #suppressed = new Set<string>();
  readonly #cancelListeners = new Set<TaskCancelListener>();

  private constructor(hub: HubClient, passport: Passport, options: AgentClientOptions) {
    super(hub, passport);
    this.#handler = options.handler ?? acceptInvites;
  }

  /** @internal Built by `HubClient.register` / `attach`. */
  static async start(hub: HubClient, passport: Passport, options: AgentClientOptions): Promise<AgentClient> {
    const client = new AgentClient(hub, passport, options);
    if (options.exclusiveTurns ?? true) {
      client.#locks = await TurnLocks.open(
        hub.nc,
        await jetstreamManager(hub.nc),
        hub.rpc.names,
        newId(),
        options.turnLockTtlMs,
      );
    }
    await client.startConsuming();
    return client;
  }

  /**
   * Calls `listener` for every `ag2.task.cancel_request` sent to this agent, as soon as it arrives, even while a
   * turn of the same channel is running. Returns the function that removes the listener.
   */
  onTaskCancelRequest(listener: TaskCancelListener): () => void {
    this.#cancelListeners.add(listener);
    return () => this.#cancelListeners.delete(listener);
  }

  protected override observe(envelope: Envelope): void {
    if (envelope.event_type !== EV_TASK_CANCEL_REQUEST || envelope.sender_id === this.agentId) return;
    const data = TaskCancelDataSchema.safeParse(envelope.event_data);
    if (!data.success) return;
    for (const listener of [...this.#cancelListeners]) {
      try {
        listener(data.data.task_id, data.data.reason, envelope);
      } catch (err) {
        this.hub.logger.error({ err, agentId: this.agentId }, 'task cancel listener failed');
      }
    }
  }

  /** Replaces the delivery handler. */
  onEnvelope(handler: AgentHandler): void {
    this.#handler = handler;
  }

  /** Stops running the handler for one channel (its deliveries still reach `nextEnvelope`); e.g. while delegating. */
  suppressHandler(channelId: string): void {
    this.#suppressed.add(channelId);
  }

  protected async handle(envelope: Envelope, _msg: JsMsg): Promise<'ack' | 'retry'> {
    this.queue.push(envelope);
    if (this.#suppressed.has(envelope.channel_id)) return 'ack';
    return (await this.#runExclusive(envelope)) ? 'ack' : 'retry';
  }

  /**
   * Runs the handler on `envelope` holding the (agent, channel) turn lock when turns are exclusive; false when
   * another replica holds the lock (the turn is theirs for now).
   */
  async #runExclusive(envelope: Envelope): Promise<boolean> {
    const locks = this.#locks !== null && !isProtocolEvent(envelope.event_type) ? this.#locks : null;
    if (locks !== null && !(await locks.acquire(this.agentId, envelope.channel_id))) return false;
    const renew =
      locks === null
        ? null
        : setInterval(() => void locks.renew(this.agentId, envelope.channel_id).catch(() => false), locks.ttlMs / 3);
    try {
      await this.#handler(envelope, this);
    } finally {
      if (renew !== null) clearInterval(renew);
      if (locks !== null) await locks.release(this.agentId, envelope.channel_id).catch(() => undefined);
    }
    return true;
  }

  /**
   * Re-runs the handler for every turn the hub expects from this agent whose trigger is known: after a restart, an
   * agent picks up where it stopped. A turn another replica is running (it holds the turn lock) is left to it.
   * Resolves with the number of turns re-run.
   */
  async resumePendingTurns(): Promise<number> {
    let count = 0;
    for (const turn of await this.pendingTurns()) {
      if (turn.triggering_envelope_id === null) continue;
      const log = await this.readWal(turn.channel_id);
      const trigger = log.find((e) => e.envelope_id === turn.triggering_envelope_id);
      if (trigger === undefined) continue;
      if (await this.#runExclusive(trigger)) count += 1;
    }
    return count;
  }
}

/** The handler of an agent without one: accept every invite. */
async function acceptInvites(envelope: Envelope, client: AgentClient): Promise<void> {
  if (isInviteFor(client, envelope)) await ackInvite(client, envelope);
}
