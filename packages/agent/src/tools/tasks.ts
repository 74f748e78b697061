import { setTimeout as sleep } from 'node:timers/promises';
import { repr } from '@ag2net/protocol/internal';
import { EV_TASK_CANCEL_REQUEST, isTerminalTaskState, type TaskMetadata } from '@ag2net/protocol';
import type { TaskDirectory, ToolContext } from './context.js';
import { currentTask } from '../tasks/run.js';
import { message, pyFloat } from './format.js';

/** Arguments of `tasks`. */
export interface TasksArgs {
  readonly action: 'progress' | 'complete' | 'list' | 'status' | 'wait' | 'cancel';
  readonly payload?: Record<string, unknown> | null;
  readonly result?: unknown;
  readonly task_id?: string | null;
  readonly reason?: string | null;
  /** For `list`: the caller's tasks (`own`, default) or everyone's. */
  readonly scope?: 'own' | 'all' | null;
  /** For `list`: leave out terminal tasks (`active`, default). */
  readonly state?: 'active' | 'all' | null;
  /** For `wait`, in seconds; default 300. */
  readonly timeout?: number | null;
  /** For `wait`, in seconds; default 0.1. */
  readonly poll_interval?: number | null;
  /** For `list`; default 20. */
  readonly limit?: number | null;
}

/**
 * AG2's `tasks`: observe tasks (`list`, `status`, `wait`) and ask an owner to stop one (`cancel` posts
 * `ag2.task.cancel_request` to the owner in the task's channel). `progress` and `complete` act on the task that
 * `runTask` runs around the current tool call; without one they answer as AG2 does.
 * Failures are `Error: …` strings.
 */
export async function tasks(
  ctx: ToolContext,
  args: TasksArgs,
): Promise<Record<string, unknown>[] | Record<string, unknown> | string> {
  const directory = ctx.tasks;
  switch (args.action) {
    case 'progress': {
      const task = currentTask();
      if (task === undefined) return 'Error: progress requires an active `agent.task(...)` block';
      await task.progress(args.payload ?? {});
      return `progress recorded for task ${task.taskId}`;
    }
    case 'complete': {
      const task = currentTask();
      if (task === undefined) return 'Error: complete requires an active `agent.task(...)` block';
      task.complete(args.result ?? null);
      return `task ${task.taskId} will complete with this result`;
    }
    case 'list':
      return directory === null ? NO_TASK_OPS : list(ctx, directory, args);
    case 'status': {
      if (!args.task_id) return 'Error: status requires `task_id`';
      if (directory === null) return NO_TASK_OPS;
      const task = await find(directory, args.task_id);
      return task === null ? `Error: task ${repr(args.task_id)} not found` : taskSummary(task);
    }
    case 'wait':
      if (!args.task_id) return 'Error: wait requires `task_id`';
      if (directory === null) return NO_TASK_OPS;
      return wait(directory, args.task_id, {
        timeout: args.timeout ?? 300,
        pollInterval: args.poll_interval ?? 0.1,
        signal: ctx.signal,
      });
    case 'cancel':
      if (!args.task_id) return 'Error: cancel requires `task_id`';
      return directory === null
        ? NO_TASK_OPS
        : cancel(ctx, directory, { taskId: args.task_id, reason: args.reason ?? '' });
    default:
      return unknownAction(args.action);
  }
}

/** What the observation actions answer without a task directory. */
const NO_TASK_OPS = 'Error: no task records are available to this agent';

async function list(ctx: ToolContext, directory: TaskDirectory, args: TasksArgs): Promise<Record<string, unknown>[]> {
  const limit = args.limit ?? 20;
  const owner = (args.scope ?? 'own') === 'own' ? ctx.client.agentId : null;
  const all = await directory.listTasks({ ownerId: owner, limit: limit * 4 });
  const kept = (args.state ?? 'active') === 'active' ? all.filter((t) => !isTerminalTaskState(t.state)) : all;
  return kept.slice(0, limit).map(taskSummary);
}

async function wait(
  directory: TaskDirectory,
  taskId: string,
  options: { readonly timeout: number; readonly pollInterval: number; readonly signal: AbortSignal | undefined },
): Promise<Record<string, unknown> | string> {
  const { timeout, pollInterval, signal } = options;
  const deadline = performance.now() + timeout * 1000;
  while (performance.now() < deadline) {
    const task = await find(directory, taskId);
    if (task === null) return `Error: task ${repr(taskId)} not found`;
    if (isTerminalTaskState(task.state)) return taskSummary(task);
    // A cancelled turn stops waiting: the sleep rejects with the signal's reason.
    await sleep(pollInterval * 1000, undefined, signal === undefined ? {} : { signal });
  }
  return `Error: task ${repr(taskId)} did not complete within ${pyFloat(timeout)}s`;
}

async function cancel(
  ctx: ToolContext,
  directory: TaskDirectory,
  request: { readonly taskId: string; readonly reason: string },
): Promise<string> {
  const { taskId, reason } = request;
  const task = await find(directory, taskId);
  if (task === null) return `Error: task ${repr(taskId)} not found`;
  if (isTerminalTaskState(task.state)) return `task ${repr(taskId)} is already ${task.state}`;
  if (!task.channel_id) {
    return `Error: task ${repr(taskId)} has no associated channel; cancel_request envelopes need a channel to ride on`;
  }
  try {
    await ctx.client.sendEnvelope({
      channel_id: task.channel_id,
      audience: [task.owner_id],
      event_type: EV_TASK_CANCEL_REQUEST,
      event_data: { task_id: taskId, reason },
      task_id: taskId,
    });
  } catch (err) {
    return `Error: cancel_request post failed: ${message(err)}`;
  }
  return `cancel_request posted to ${task.owner_id} for task ${taskId}`;
}

async function find(directory: TaskDirectory, taskId: string): Promise<TaskMetadata | null> {
  try {
    return await directory.getTask(taskId);
  } catch {
    return null;
  }
}

/** AG2's `_task_summary`. */
function taskSummary(t: TaskMetadata): Record<string, unknown> {
  return {
    task_id: t.task_id,
    owner_id: t.owner_id,
    title: t.spec.title,
    capability: t.spec.capability,
    state: t.state,
    created_at: t.created_at,
    started_at: t.started_at,
    completed_at: t.completed_at,
    expires_at: t.expires_at,
    last_progress_at: t.last_progress_at,
    result: t.result ?? null,
    error: t.error,
  };
}

function unknownAction(action: never): string {
  return `Error: unknown action ${repr(action)}; choose from progress, complete, list, status, wait, cancel`;
}
