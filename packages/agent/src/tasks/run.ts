import type { AgentClient } from '@ag2net/client';
import { Ag2netError, EV_TASK_CANCELLED, ErrorCode, newId, parseDuration, type TaskSpec } from '@ag2net/protocol';
import { AsyncLocalStorage } from 'node:async_hooks';
import { currentTurn } from '../runtime/turn-context.js';
import { TaskMirror } from './mirror.js';

/** What a task is, as `runTask` takes it. */
export interface TaskOptions {
  readonly title: string;
  readonly objective?: string;
  /** Ties the outcome to the owner's observed track record for this capability. */
  readonly capability?: string | null;
  readonly inputs?: Record<string, unknown>;
  /** The channel the task belongs to; default the channel of the turn being handled. */
  readonly channelId?: string | null;
  /** Time to live (seconds or `"15m"`); the hub expires the task then. Default the owner's rule. */
  readonly ttl?: string | number;
  /** The agent that owns the task; default the agent of the turn being handled. */
  readonly client?: AgentClient;
}

/** A running task, as its body sees it. */
export interface TaskHandle {
  readonly taskId: string;
  readonly channelId: string | null;
  /** Aborted when someone's `ag2.task.cancel_request` for this task arrives. */
  readonly signal: AbortSignal;
  /** Reports progress (merged into the task's `progress`). */
  progress(payload: Record<string, unknown>): Promise<void>;
  /** Sets the result the task completes with (otherwise the body's return value). */
  complete(result: unknown): void;
  /** Stores a checkpoint of the task's state (last write wins). */
  checkpoint(state: Record<string, unknown>): Promise<void>;
}

/** Thrown out of a task that was cancelled; the message is the reason. Code `cancelled`. Local. */
export class TaskCancelledError extends Ag2netError {
  override readonly name = 'TaskCancelledError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Cancelled, message, options);
  }
}

const current = new AsyncLocalStorage<TaskHandle>();

/** The innermost task running here, if any (what the `tasks` tool's `progress` and `complete` act on). */
export function currentTask(): TaskHandle | undefined {
  return current.getStore();
}

/**
 * AG2's `agent.task(...)` block: runs `body` as a task the hub tracks. The hub learns it started (running), its
 * progress, and how it ended: completed with the body's result (or `complete(result)`), failed with the error it
 * threw, or cancelled when a cancel request arrives (the body's `signal` aborts, the owner posts
 * `ag2.task.cancelled`). Resolves with the result; rethrows the body's error.
 */
export async function runTask<T>(options: TaskOptions, body: (task: TaskHandle) => Promise<T>): Promise<T> {
  const turn = currentTurn();
  const client = options.client ?? turn?.client;
  if (client === undefined) throw new TypeError('runTask needs a client outside a turn (options.client)');
  const channelId = options.channelId === undefined ? (turn?.channelId ?? null) : options.channelId;
  const taskId = newId();
  const mirror = new TaskMirror(client);
  const now = Date.now();
  const spec: TaskSpec = {
    title: options.title,
    objective: options.objective ?? '',
    capability: options.capability ?? null,
    inputs: options.inputs ?? {},
  };
  const expiresAt =
    options.ttl === undefined ? undefined : new Date(now + parseDuration(options.ttl) * 1000).toISOString();
  await mirror.started(
    { taskId, spec, channelId, ...(expiresAt === undefined ? {} : { expiresAt }) },
    new Date(now).toISOString(),
  );

  const controller = new AbortController();
  const stopListening = client.onTaskCancelRequest((id, reason) => {
    if (id === taskId) controller.abort(new TaskCancelledError(reason));
  });
  let explicit: { value: unknown } | null = null;
  const handle: TaskHandle = {
    taskId,
    channelId,
    signal: controller.signal,
    progress: (payload) => mirror.progress(taskId, payload, channelId),
    complete: (result) => {
      explicit = { value: result };
    },
    checkpoint: async (state) => {
      await client.hub.call('checkpointTask', { task_id: taskId, state }, { caller: client.agentId });
    },
  };
  try {
    const value = await current.run(handle, () => body(handle));
    if (controller.signal.aborted) throw new TaskCancelledError(reasonOf(controller.signal));
    const result: unknown = explicit === null ? value : (explicit as { value: unknown }).value;
    await mirror.completed(taskId, result, channelId);
    return value;
  } catch (err) {
    if (controller.signal.aborted) {
      const reason = reasonOf(controller.signal);
      // The owner's `ag2.task.cancelled` in the task's channel tells the participants; the hub ends the task with it.
      if (channelId !== null) {
        await client
          .sendEnvelope({
            channel_id: channelId,
            event_type: EV_TASK_CANCELLED,
            event_data: { task_id: taskId, reason },
            task_id: taskId,
          })
          .catch((postErr: unknown) =>
            client.hub.logger.warn({ err: postErr, taskId }, 'posting ag2.task.cancelled failed'),
          );
      }
      await mirror.cancelled(taskId, reason, channelId);
      throw err instanceof TaskCancelledError ? err : new TaskCancelledError(reason, { cause: err });
    }
    await mirror.failed(taskId, err instanceof Error ? err.message : String(err), channelId);
    throw err;
  } finally {
    stopListening();
  }
}

function reasonOf(signal: AbortSignal): string {
  return signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? '');
}
