import { newId } from '@ag2net/protocol';
import type { ParticipantHub } from './contracts.js';

/**
 * Default lifetime of a turn lock that is not renewed, in ms: a replica that dies mid-turn frees its channel about
 * this long after its last renewal. Holders renew every third of it.
 */
export const TURN_LOCK_TTL_MS = 6_000;

/** Options of a call of `TurnLocks`. */
export interface TurnLockCallOptions {
  /** Stops retrying (the call then rejects with the signal's reason). */
  readonly signal?: AbortSignal;
}

/** Whose locks `TurnLocks` takes, and for how long. */
export interface TurnLocksOptions {
  /** The hub connection of the agent (`participant.hub`); only `call` is used. */
  readonly hub: Pick<ParticipantHub, 'call'>;
  /** The agent whose turns are locked: the caller of every lock operation. */
  readonly agentId: string;
  /** This replica's id, the holder of every lock it takes; default a fresh id. */
  readonly holder?: string;
  /** How long a lock outlives its last renewal, in ms (1 000 to 120 000); default `TURN_LOCK_TTL_MS`. */
  readonly ttlMs?: number;
}

/**
 * Mutual exclusion of one agent's turns per channel across every replica that hosts the agent, kept by the hub
 * (`acquireTurnLock`, `renewTurnLock`, `releaseTurnLock`): only one holder at a time, renewed by its holder only,
 * lapsing `ttlMs` after the last acquisition or renewal the hub stored. The hub keeps the locks in its own storage, so
 * a replica needs no right on NATS beyond calling the hub as its agent, and a hub failover keeps them.
 *
 * Every call is retried like any idempotent operation (no hub answering, `unavailable`, a timed-out attempt); each
 * attempt waits at most a third of the TTL, so that a lost request is sent again while the lock is still alive. A
 * call rejects when the hub stayed unreachable past the RPC's retry budget or `signal` aborted: the outcome is then
 * unknown.
 */
export class TurnLocks {
  /** A lock not renewed within this many ms lapses. */
  readonly ttlMs: number;
  /** The holder id of this replica's locks. */
  readonly holder: string;
  readonly #hub: Pick<ParticipantHub, 'call'>;
  readonly #agentId: string;

  constructor(options: TurnLocksOptions) {
    this.#hub = options.hub;
    this.#agentId = options.agentId;
    this.holder = options.holder ?? newId();
    this.ttlMs = options.ttlMs ?? TURN_LOCK_TTL_MS;
  }

  /** Takes the agent's lock on `channelId`: false while another replica holds it. */
  async acquire(channelId: string, options: TurnLockCallOptions = {}): Promise<boolean> {
    const request = { channel_id: channelId, holder: this.holder, ttl_ms: this.ttlMs };
    return (await this.#hub.call('acquireTurnLock', request, this.#callOptions(options))).acquired;
  }

  /** Keeps a held lock alive: true when renewed, false when it is lost (it lapsed or another replica took it). */
  async renew(channelId: string, options: TurnLockCallOptions = {}): Promise<boolean> {
    const request = { channel_id: channelId, holder: this.holder };
    return (await this.#hub.call('renewTurnLock', request, this.#callOptions(options))).renewed;
  }

  /** Gives the lock up, unless it already lapsed and another replica holds it now. */
  async release(channelId: string, options: TurnLockCallOptions = {}): Promise<void> {
    await this.#hub.call('releaseTurnLock', { channel_id: channelId, holder: this.holder }, this.#callOptions(options));
  }

  #callOptions(options: TurnLockCallOptions): { caller: string; timeout: number; signal?: AbortSignal } {
    const timeout = Math.max(250, Math.floor(this.ttlMs / 3));
    return options.signal === undefined
      ? { caller: this.#agentId, timeout }
      : { caller: this.#agentId, timeout, signal: options.signal };
  }
}
