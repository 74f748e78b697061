import type { AgentClient } from '@ag2net/client';
import { AsyncLocalStorage } from 'node:async_hooks';

/** The turn being handled: who answers, in which channel, to which envelope. */
export interface TurnContext {
  readonly client: AgentClient;
  readonly channelId: string;
  readonly triggerId: string;
  /** Aborted when the turn is cancelled; code running in the turn (tools) should stop then. */
  readonly signal?: AbortSignal;
}

const storage = new AsyncLocalStorage<TurnContext>();

/** The turn the calling code runs in (inside the default handler's LLM turn, e.g. in a tool), if any. */
export function currentTurn(): TurnContext | undefined {
  return storage.getStore();
}

/** Runs `fn` as part of `turn`. */
export function withTurn<T>(turn: TurnContext, fn: () => Promise<T>): Promise<T> {
  return storage.run(turn, fn);
}
