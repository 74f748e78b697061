import {
  EV_EXPECTATION_VIOLATED,
  EV_TASK_CANCEL_REQUEST,
  ExpectationViolatedDataSchema,
  ViolationHandlerName,
  TaskCancelDataSchema,
  isProtocolEvent,
  type Envelope,
  type Passport,
} from '@ag2net/protocol';
import type { ParticipantHub } from './contracts.js';
import type { DeliveryContext, DeliveryOutcome } from './inbox.js';
import type { Logger } from './logger.js';
import { ackInvite, isInviteFor } from './invites.js';
import { Participant } from './participant.js';
import { TurnLease } from './turn-lease.js';
import { TurnLocks } from './turn-locks.js';
import { TurnAttempts, isTransientTurnFailure } from './turn-retries.js';

/** Called when a cancel request for a task arrives: the task id, the reason, the request envelope. */
export type TaskCancelListener = (taskId: string, reason: string, request: Envelope) => void;

/** What a turn's handler gets besides the envelope and the client. */
export interface TurnContext {
  /**
   * Aborts when the turn must stop: its turn lock was lost (`TurnLockLostError`), `disconnect({ graceMs })` ran out
   * of grace or the inbox closed (`TurnAbortedError`). Pass it to every model and tool call; a handler whose signal
   * aborted is never acked (its delivery is redelivered), whatever it returns.
   */
  readonly signal: AbortSignal;
}

/** What an agent does with a delivery. Runs in order per channel; channels run in parallel. */
export type AgentHandler = (envelope: Envelope, client: AgentClient, context: TurnContext) => Promise<void>;

/** A delivery whose turn failed for good, as `onTurnFailed` is told it. */
export interface FailedTurn {
  /** The delivery whose turn failed. */
  readonly envelope: Envelope;
  /** What its last attempt threw. */
  readonly error: unknown;
  /** Attempts made: 1 for a permanent failure met on the first run (`isTransientFailure`), else `maxTurnAttempts`. */
  readonly attempts: number;
  /** The agent whose turn it was, e.g. to post `ag2.turn.failed` as it. */
  readonly client: AgentClient;
}

/** Told about a delivery whose turn failed for good; the delivery is acked once it returns. */
export type TurnFailedListener = (failed: FailedTurn) => void | Promise<void>;

/** Options of an agent participant. */
export interface AgentClientOptions {
  /** The delivery handler; default: accept invites, ignore everything else. `onEnvelope` replaces it. */
  readonly handler?: AgentHandler;
  /**
   * Take a cross-replica lock per (agent, channel) around each turn, so that replicas hosting the same agent never
   * run two turns of one channel at once. Default true.
   */
  readonly exclusiveTurns?: boolean;
  /**
   * How long this client's turn locks outlive it when it stops renewing them (a crash), in ms, 1 000 to 120 000;
   * default `TURN_LOCK_TTL_MS` (6 000). Renewed every third of it.
   */
  readonly turnLockTtlMs?: number;
  /**
   * Attempts of a delivery whose handler throws a transient failure, before it is reported and acked; default 5. A
   * permanent failure (`isTransientFailure` false) is not run again: the failure is reported at once.
   */
  readonly maxTurnAttempts?: number;
  /** Delay before the second attempt of a failed turn, in ms, doubled for each further one (at most 60 s); default 1 000. */
  readonly turnRetryBackoffMs?: number;
  /**
   * Called once a delivery failed `maxTurnAttempts` times, or once with a permanent failure, before it is acked; e.g.
   * to post `ag2.turn.failed` (the agent runtime's `registerAgent` does). Default: logged only.
   */
  readonly onTurnFailed?: TurnFailedListener;
  /**
   * The turn-failure policy: whether a turn that threw `error` is run again (true) or reported at once (false).
   * Default `isTransientTurnFailure`: a final wire error (`protocol_error` for a closed channel or a turn out of
   * order, …) and an error declaring `retryable: false` are permanent, anything else is transient. The agent
   * runtime's `registerAgent` sets its own, which classifies model failures as well.
   */
  readonly isTransientFailure?: (error: unknown) => boolean;
  /**
   * What the client's log lines of a failed turn say of its error; default `{ err }`. The agent runtime's
   * `registerAgent` sets one that keeps a provider's message (which may quote the key or the prompt) out.
   */
  readonly describeFailure?: (error: unknown) => object;
}

/** A delivery that found its channel's turn lock held is handed back after this delay, in ms. */
const LOCK_BUSY_RETRY_MS = 500;

/** How one run of a turn ended. */
type TurnRun =
  | { readonly kind: 'done' }
  | { readonly kind: 'busy' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * An agent on the network: consumes its durable inbox and hands each delivery to its handler (the LLM runtime's
 * default handler, or your own), holding the (agent, channel) turn lock while it runs. Deliveries reach
 * subscriptions (`subscribe`, `nextEnvelope`) only while some are open: nothing is queued for a pull nobody made.
 */
export class AgentClient extends Participant {
  #handler: AgentHandler;
  #locks: TurnLocks | null = null;
  readonly #attempts: TurnAttempts;
  readonly #onTurnFailed: TurnFailedListener | undefined;
  readonly #isTransient: (error: unknown) => boolean;
  readonly #describeFailure: (error: unknown) => object;
  readonly #suppressed = new Set<string>();
  readonly #cancelListeners = new Set<TaskCancelListener>();
  /** The hub client's logger, naming this agent on every line. */
  readonly #log: Logger;

  private constructor(hub: ParticipantHub, passport: Passport, options: AgentClientOptions) {
    super(hub, passport);
    this.#log = hub.logger.child({ agent: passport.name, agentId: this.agentId });
    this.#handler = options.handler ?? acceptInvites;
    this.#attempts = new TurnAttempts(options.maxTurnAttempts, options.turnRetryBackoffMs);
    this.#onTurnFailed = options.onTurnFailed;
    this.#isTransient = options.isTransientFailure ?? isTransientTurnFailure;
    this.#describeFailure = options.describeFailure ?? ((err) => ({ err }));
  }

  /** @internal Built by `HubClient.register` / `attach`. */
  static async start(hub: ParticipantHub, passport: Passport, options: AgentClientOptions): Promise<AgentClient> {
    const client = new AgentClient(hub, passport, options);
    if (options.exclusiveTurns ?? true) {
      client.#locks = new TurnLocks({
        hub,
        agentId: client.agentId,
        ...(options.turnLockTtlMs === undefined ? {} : { ttlMs: options.turnLockTtlMs }),
      });
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
        this.#log.error({ err }, 'task cancel listener failed');
      }
    }
  }

  /** Replaces the delivery handler. */
  onEnvelope(handler: AgentHandler): void {
    this.#handler = handler;
  }

  /** Stops running the handler for one channel (its deliveries still reach subscriptions); e.g. while delegating. */
  suppressHandler(channelId: string): void {
    this.#suppressed.add(channelId);
  }

  protected async handle(envelope: Envelope, context: DeliveryContext): Promise<DeliveryOutcome> {
    if (this.#suppressed.has(envelope.channel_id)) return { settle: 'ack' };
    const run = await this.#runTurn((await this.#passedTurn(envelope)) ?? envelope, context.signal);
    switch (run.kind) {
      case 'done':
        this.#attempts.settled(envelope.envelope_id);
        return { settle: 'ack' };
      case 'busy':
      case 'aborted':
        // Not the handler's failure: the turn is someone else's for now, or it was taken away. Not counted.
        return { settle: 'nak', delayMs: LOCK_BUSY_RETRY_MS };
      case 'failed':
        return this.#failed(envelope, run.error);
      default:
        return assertNever(run);
    }
  }

  /**
   * The trigger of the turn a `hide` record passed to this agent: the hub sends the record to the participant the
   * turn passes to as well as to the hidden ones, and that turn starts from the channel's trigger as the hub names it
   * (`pendingTurns`), as after a restart. `null` for any other envelope, for a record that hides this agent, and when
   * the turn has no trigger (nobody spoke yet) or is no longer this agent's.
   */
  async #passedTurn(envelope: Envelope): Promise<Envelope | null> {
    if (envelope.event_type !== EV_EXPECTATION_VIOLATED) return null;
    const data = ExpectationViolatedDataSchema.safeParse(envelope.event_data);
    if (!data.success || data.data['on_violation'] !== ViolationHandlerName.Hide) return null;
    if (data.data.violators.includes(this.agentId)) return null;
    const turn = (await this.pendingTurns()).find((t) => t.channel_id === envelope.channel_id);
    if (turn === undefined || turn.triggering_envelope_id === null) return null;
    const log = await this.readWal(envelope.channel_id);
    return log.find((e) => e.envelope_id === turn.triggering_envelope_id) ?? null;
  }

  /**
   * A handler threw: hand the delivery back with backoff, or after the last attempt or a permanent failure (no retry
   * can change it; `isTransientFailure`) report it and ack it.
   */
  async #failed(envelope: Envelope, error: unknown): Promise<DeliveryOutcome> {
    const final = !this.#isTransient(error);
    const { attempts, retryInMs } = this.#attempts.fail(envelope.envelope_id, { final });
    const fields = {
      ...this.#describeFailure(error),
      channelId: envelope.channel_id,
      envelopeId: envelope.envelope_id,
    };
    if (retryInMs !== null) {
      this.#log.warn({ ...fields, attempts, retryInMs }, 'turn failed; retrying');
      return { settle: 'nak', delayMs: retryInMs };
    }
    if (final) this.#log.error({ ...fields, attempts }, 'turn failed with a permanent error; not retried');
    else this.#log.error({ ...fields, attempts }, 'turn failed; giving up');
    await this.#report({ envelope, error, attempts });
    return { settle: 'ack' };
  }

  /** Tells `onTurnFailed` about a turn that failed for good; a listener that throws is logged. */
  async #report(failed: Omit<FailedTurn, 'client'>): Promise<void> {
    try {
      await this.#onTurnFailed?.({ ...failed, client: this });
    } catch (err) {
      this.#log.error({ err, envelopeId: failed.envelope.envelope_id }, 'turn failure listener failed');
    }
  }

  /**
   * Runs the handler on `envelope` holding the (agent, channel) turn lock when turns are exclusive (protocol events
   * need none). The lock is a heartbeat: renewed every TTL/3, and the turn is aborted when it is lost.
   */
  async #runTurn(envelope: Envelope, stop: AbortSignal): Promise<TurnRun> {
    const locks = this.#locks !== null && !isProtocolEvent(envelope.event_type) ? this.#locks : null;
    if (locks === null) return this.#callHandler(envelope, stop);
    const acquiredAt = Date.now();
    const channelId = envelope.channel_id;
    let acquired: boolean;
    try {
      acquired = await locks.acquire(channelId, { signal: stop });
    } catch (err) {
      this.#log.warn({ err, channelId: envelope.channel_id }, 'turn lock unavailable');
      return { kind: 'busy' };
    }
    if (!acquired) return { kind: 'busy' };
    const lease = new TurnLease({
      ttlMs: locks.ttlMs,
      acquiredAt,
      stop,
      renew: (signal) => locks.renew(channelId, { signal }),
      onRenewError: (err) => this.#log.warn({ err, channelId: envelope.channel_id }, 'turn lock renewal failed'),
    });
    try {
      const run = await this.#callHandler(envelope, AbortSignal.any([stop, lease.signal]));
      if (lease.signal.aborted) {
        this.#log.warn({ channelId: envelope.channel_id }, 'turn lock lost; turn aborted');
      }
      return run;
    } finally {
      lease.stop();
      if (!lease.signal.aborted) {
        // Bounded: a lock whose release got no answer lapses by its TTL anyway.
        await locks
          .release(channelId, { signal: AbortSignal.timeout(locks.ttlMs) })
          .catch((err: unknown) => this.#log.warn({ err, channelId: envelope.channel_id }, 'turn lock release failed'));
      }
    }
  }

  async #callHandler(envelope: Envelope, signal: AbortSignal): Promise<TurnRun> {
    try {
      await this.#handler(envelope, this, { signal });
      return signal.aborted ? { kind: 'aborted' } : { kind: 'done' };
    } catch (error) {
      return signal.aborted ? { kind: 'aborted' } : { kind: 'failed', error };
    }
  }

  /**
   * Re-runs the handler for every turn the hub expects from this agent whose trigger is known: after a restart, an
   * agent picks up where it stopped. A turn another replica is running (it holds the turn lock) is left to it; a
   * turn whose handler throws is logged, and reported through `onTurnFailed` when the failure is permanent (a
   * transient one stays expected: the next call tries it again). Resolves with the number of turns answered.
   */
  async resumePendingTurns(): Promise<number> {
    let count = 0;
    for (const turn of await this.pendingTurns()) {
      if (turn.triggering_envelope_id === null) continue;
      const log = await this.readWal(turn.channel_id);
      const trigger = log.find((e) => e.envelope_id === turn.triggering_envelope_id);
      if (trigger === undefined) continue;
      const run = await this.#runTurn(trigger, this.turnSignal);
      if (run.kind === 'done') count += 1;
      else if (run.kind === 'failed') {
        this.#log.error({ ...this.#describeFailure(run.error), channelId: turn.channel_id }, 'resumed turn failed');
        // A permanent failure is reported as a delivery's is; a transient one stays expected by the hub.
        if (!this.#isTransient(run.error)) await this.#report({ envelope: trigger, error: run.error, attempts: 1 });
      }
    }
    return count;
  }
}

/** The handler of an agent without one: accept every invite. */
async function acceptInvites(envelope: Envelope, client: AgentClient, _context: TurnContext): Promise<void> {
  if (isInviteFor(client, envelope)) await ackInvite(client, envelope);
}

function assertNever(value: never): never {
  throw new TypeError(`unexpected turn outcome ${JSON.stringify(value)}`);
}
