import type { AgentClient } from '@ag2net/client';
import { NotFoundError, TaskMetadataSchema, TaskState, type TaskMetadata, type TaskSpec } from '@ag2net/protocol';

/** The part of an agent client the mirror uses. */
export type MirrorClient = Pick<AgentClient, 'agentId' | 'hub'>;

/** What a mirror reports when it starts a task. */
export interface MirroredTaskStart {
  readonly taskId: string;
  readonly spec: TaskSpec;
  readonly channelId: string | null;
  /** When the task lapses; the hub expires it then. Default: the owner's rule (`task_ttl_default`). */
  readonly expiresAt?: string | null;
}

/**
 * AG2's `TaskMirror`: turns the agent runtime's task events (started, progress, completed, failed, expired,
 * cancelled) into the hub's task records (`observeTask`, `updateTask`). The hub counts a terminal outcome in the
 * owner's observed track record for the task's capability. A task the hub no longer knows is ignored; any other
 * failure is reported as the task event `mirror_failed` and never thrown into the agent's work.
 */
export class TaskMirror {
  constructor(private readonly client: MirrorClient) {}

  async started(start: MirroredTaskStart, nowIso: string): Promise<void> {
    const task: TaskMetadata = TaskMetadataSchema.parse({
      task_id: start.taskId,
      owner_id: this.client.agentId,
      spec: start.spec,
      state: TaskState.Running,
      created_at: nowIso,
      started_at: nowIso,
      channel_id: start.channelId,
      ...(start.expiresAt === undefined ? {} : { expires_at: start.expiresAt }),
    });
    await this.#mirror({ op: 'observe_task', taskId: task.task_id, channelId: start.channelId }, () =>
      this.client.hub.call('observeTask', { task }, { caller: this.client.agentId }),
    );
  }

  progress(taskId: string, payload: Record<string, unknown>, channelId: string | null): Promise<void> {
    return this.#update(taskId, channelId, { progress: payload });
  }

  completed(taskId: string, result: unknown, channelId: string | null): Promise<void> {
    return this.#update(taskId, channelId, { state: TaskState.Completed, result });
  }

  failed(taskId: string, error: string, channelId: string | null): Promise<void> {
    return this.#update(taskId, channelId, { state: TaskState.Failed, error });
  }

  expired(taskId: string, channelId: string | null): Promise<void> {
    return this.#update(taskId, channelId, { state: TaskState.Expired });
  }

  cancelled(taskId: string, reason: string, channelId: string | null): Promise<void> {
    return this.#update(taskId, channelId, { state: TaskState.Cancelled, error: reason === '' ? null : reason });
  }

  #update(
    taskId: string,
    channelId: string | null,
    change: { state?: TaskState; progress?: Record<string, unknown>; result?: unknown; error?: string | null },
  ): Promise<void> {
    return this.#mirror({ op: 'update_task', taskId, channelId }, () =>
      this.client.hub.call('updateTask', { task_id: taskId, ...change }, { caller: this.client.agentId }),
    );
  }

  /** Runs `call`; a failure but `not_found` is reported as the task event `mirror_failed` of `op`. */
  async #mirror(
    of: { readonly op: string; readonly taskId: string; readonly channelId: string | null },
    call: () => Promise<unknown>,
  ): Promise<void> {
    const { op, taskId, channelId } = of;
    try {
      await call();
    } catch (err) {
      if (err instanceof NotFoundError) return;
      await this.client.hub
        .call(
          'fireTaskEvent',
          {
            task_id: taskId,
            kind: 'mirror_failed',
            payload: {
              op,
              owner_id: this.client.agentId,
              channel_id: channelId,
              exc_type: err instanceof Error ? err.name : typeof err,
              exc_message: err instanceof Error ? err.message : String(err),
            },
          },
          { caller: this.client.agentId },
        )
        .catch(() => undefined);
    }
  }
}
