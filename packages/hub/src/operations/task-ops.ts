import {
  AccessDeniedError,
  AuthError,
  OPERATOR_CALLER,
  ProtocolError,
  TaskState,
  isParticipant,
  isTerminalChannelState,
  isTerminalTaskState,
  parseDuration,
  type ChannelMetadata,
  type TaskMetadata,
  TaskEndReason,
} from '@ag2net/protocol';
import { type HubRequestParsed, repr } from '@ag2net/protocol/internal';
import { AuditKind } from '@ag2net/protocol';
import { isoAt } from '../base/clock.js';
import { countObservation, type ObservationDeps } from './agent-ops.js';
import { pageBudget, pageOf, type Page } from '../base/paging.js';
import { deniedError } from '../governance/arbiter.js';
import { taskNotFound } from '../stores/task-table.js';
import { channelNotFound } from '../stores/channel-table.js';
import type { HomeStores, HubEnv, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** What changing a task uses: its table, the audit trail, and its owner's resume for its outcome. */
export type TaskChangeDeps = ObservationDeps & Pick<HubEnv, 'logger'>;

/** What reading a task as a caller may see it uses. */
export type TaskViewDeps = Pick<HomeStores, 'tasks' | 'channelIndex'> & PartitionPick<'channels'>;

/** Runs `fn` alone for one task: every change to a task goes through here. */
export function underTask<T>(ctx: PartitionPick<'serial'>, taskId: string, fn: () => Promise<T>): Promise<T> {
  return ctx.partition.serial.run(`task\u0000${taskId}`, fn);
}

/**
 * AG2's `observe_task`: the caller reports a task it owns. A new task passes the arbiter (`max_concurrent_tasks`),
 * must name a channel the owner is in (if any) that has not ended, and gets `expires_at` = now + the owner's
 * `task_ttl_default` when it has none (AG2 declared that default but never applied it). A known task is updated:
 * state, `started_at`, `expires_at`, `channel_id` when given, progress merged.
 */
export async function observeTask(
  ctx: TaskChangeDeps & Pick<HubPolicies, 'arbiter'> & ChannelLookupDeps,
  callerId: string,
  task: TaskMetadata,
): Promise<TaskMetadata> {
  if (task.owner_id !== callerId) {
    throw new AuthError(`owner_id ${repr(task.owner_id)} does not match the caller ${repr(callerId)}`);
  }
  const owner = ctx.registry.require(callerId);
  return underTask(ctx, task.task_id, async () => {
    const existing = ctx.tasks.get(task.task_id);
    if (existing !== undefined) return observeExisting(ctx, callerId, { existing, report: task });
    if (task.channel_id !== null) checkTaskChannel(ctx, callerId, task.channel_id);
    const decision = await ctx.arbiter.authorizeTask({ task, owner, openTasks: ctx.tasks.openCount(callerId) });
    if (!decision.allow) throw deniedError(decision);
    const nowMs = ctx.clock.now();
    const ttl = parseDuration(owner.rule.limits.task_ttl_default);
    const fresh: TaskMetadata = {
      ...task,
      expires_at: task.expires_at ?? (ttl > 0 ? isoAt(nowMs + ttl * 1000) : null),
    };
    return settle(ctx, { before: null, task: stamp(fresh, task.state, nowMs), reason: '' });
  });
}

/** An owner's report of a task the hub knows (`existing`): applied unless the task ended or the move is not allowed. */
async function observeExisting(
  ctx: TaskChangeDeps & ChannelLookupDeps,
  callerId: string,
  observed: { readonly existing: TaskMetadata; readonly report: TaskMetadata },
): Promise<TaskMetadata> {
  const { existing, report } = observed;
  requireOwner(existing, callerId);
  if (isTerminalTaskState(existing.state)) return existing;
  checkTransition(existing, report.state);
  if (report.channel_id !== null && report.channel_id !== existing.channel_id) {
    checkTaskChannel(ctx, callerId, report.channel_id);
  }
  const next: TaskMetadata = {
    ...existing,
    state: report.state,
    started_at: report.started_at ?? existing.started_at,
    expires_at: report.expires_at ?? existing.expires_at,
    channel_id: report.channel_id ?? existing.channel_id,
    progress: { ...existing.progress, ...report.progress },
    error: report.error ?? existing.error,
  };
  return settle(ctx, {
    before: existing,
    task: stamp(next, report.state, ctx.clock.now()),
    reason: report.error ?? '',
  });
}

/**
 * AG2's `update_task`, owner only: a terminal task is returned unchanged; progress is merged and stamps
 * `last_progress_at`; result and error are set; a terminal state stamps `completed_at`. Unlike AG2, reaching a
 * terminal state here is audited (`task_terminated`) like any other ending.
 */
export async function updateTask(
  ctx: TaskChangeDeps,
  callerId: string,
  req: HubRequestParsed<'updateTask'>,
): Promise<TaskMetadata> {
  return underTask(ctx, req.task_id, async () => {
    const task = ctx.tasks.require(req.task_id);
    requireOwner(task, callerId);
    if (isTerminalTaskState(task.state)) return task;
    const state = req.state ?? task.state;
    checkTransition(task, state);
    const nowMs = ctx.clock.now();
    const next: TaskMetadata = {
      ...task,
      state,
      progress: req.progress === null ? task.progress : { ...task.progress, ...req.progress },
      last_progress_at: req.progress === null ? task.last_progress_at : isoAt(nowMs),
      error: req.error ?? task.error,
      ...(req.result === undefined ? {} : { result: req.result }),
    };
    return settle(ctx, { before: task, task: stamp(next, state, nowMs), reason: req.error ?? '' });
  });
}

/** Ends a task the hub ends (TTL, channel closed, cancelled by its owner's envelope); a terminal task is left alone. */
export async function endTask(
  ctx: TaskChangeDeps,
  taskId: string,
  end: { readonly state: TaskState; readonly reason: string },
): Promise<TaskMetadata | null> {
  const { state, reason } = end;
  return underTask(ctx, taskId, async () => {
    const task = ctx.tasks.get(taskId);
    if (task === undefined || isTerminalTaskState(task.state)) return null;
    const error = state === TaskState.Expired ? reason || task.error || 'expired' : reason || task.error;
    return settle(ctx, { before: task, task: stamp({ ...task, state, error }, state, ctx.clock.now()), reason });
  });
}

/**
 * AG2's cascade: every task of an ended channel that is still open expires with `channel_closed`. A hub that does not
 * hold the home partition of a partitioned deployment leaves it to the one that does (`expireTasksOfEndedChannels`).
 */
export async function expireTasksOfChannel(ctx: TaskChangeDeps, channelId: string): Promise<void> {
  if (!ctx.tasks.writesHere()) return;
  for (const task of ctx.tasks.open()) {
    if (task.channel_id === channelId) {
      await endTask(ctx, task.task_id, { state: TaskState.Expired, reason: TaskEndReason.ChannelClosed });
    }
  }
}

/** Open tasks past `expires_at` expire with `ttl_expired`. */
export async function expireDueTasks(ctx: TaskChangeDeps, nowMs: number): Promise<void> {
  for (const task of ctx.tasks.open()) {
    if (task.expires_at !== null && Date.parse(task.expires_at) <= nowMs) {
      await endTask(ctx, task.task_id, { state: TaskState.Expired, reason: TaskEndReason.TtlExpired });
    }
  }
}

/**
 * A task as the caller may see it: its owner, a participant of its channel, or the operator. Anyone else is answered
 * exactly as for a task that does not exist.
 */
export function getTask(ctx: TaskViewDeps, callerId: string, taskId: string): TaskMetadata {
  return visibleTask(ctx, callerId, taskId);
}

/** AG2's `list_tasks` over the tasks the caller may see: one page (`limit`, `pageBudget` bytes) and the next cursor. */
export function listTasks(
  ctx: TaskViewDeps & Pick<HubEnv, 'nc'>,
  callerId: string,
  req: HubRequestParsed<'listTasks'>,
): Page<TaskMetadata> {
  const all = ctx.tasks
    .all()
    .filter((t) => canSee(ctx, callerId, t))
    .filter((t) => req.agent_id === null || t.owner_id === req.agent_id)
    .filter((t) => req.channel_id === null || t.channel_id === req.channel_id)
    .filter((t) => req.state === null || t.state === req.state);
  return pageOf(all, { ...req, budgetBytes: pageBudget(ctx.nc) });
}

export async function checkpointTask(
  ctx: Pick<HomeStores, 'tasks'>,
  callerId: string,
  req: HubRequestParsed<'checkpointTask'>,
): Promise<void> {
  requireOwner(ctx.tasks.require(req.task_id), callerId);
  await ctx.tasks.writeCheckpoint(req.task_id, req.state);
}

/**
 * The owner's last checkpoint of a task, for its owner. A caller that may see the task (a participant of its channel)
 * is refused; one that may not is answered exactly as for a task that does not exist.
 */
export async function readTaskCheckpoint(
  ctx: TaskViewDeps,
  callerId: string,
  taskId: string,
): Promise<Record<string, unknown> | null> {
  requireOwner(visibleTask(ctx, callerId, taskId), callerId);
  return ctx.tasks.readCheckpoint(taskId);
}

/**
 * AG2's `fire_task_event`: an event of the caller's task runtime (`mirror_failed`, …) becomes a `task_event` audit
 * record. The task may be unknown to the hub (a mirror reports that its `observeTask` failed); a known task's
 * events come from its owner only. Task state is not changed: that is `updateTask`'s job.
 */
export async function fireTaskEvent(
  ctx: Pick<HomeStores, 'registry' | 'tasks' | 'audit'>,
  callerId: string,
  req: HubRequestParsed<'fireTaskEvent'>,
): Promise<void> {
  ctx.registry.require(callerId);
  const task = ctx.tasks.get(req.task_id);
  if (task !== undefined) requireOwner(task, callerId);
  await ctx.audit.record(AuditKind.TaskEvent, {
    task_id: req.task_id,
    owner_id: callerId,
    channel_id: task?.channel_id ?? null,
    event: req.kind,
    payload: req.payload,
  });
}

/** The task, if the caller may see it; `taskNotFound` both when it may not and when there is none. */
function visibleTask(ctx: TaskViewDeps, callerId: string, taskId: string): TaskMetadata {
  const task = ctx.tasks.get(taskId);
  if (task === undefined || !canSee(ctx, callerId, task)) throw taskNotFound(taskId);
  return task;
}

function canSee(ctx: ChannelLookupDeps, callerId: string, task: TaskMetadata): boolean {
  if (task.owner_id === callerId || callerId === OPERATOR_CALLER) return true;
  if (task.channel_id === null) return false;
  const channel = channelAnywhere(ctx, task.channel_id);
  return channel !== undefined && isParticipant(channel, callerId);
}

/** What finding a channel of any partition uses. */
type ChannelLookupDeps = Pick<HomeStores, 'channelIndex'> & PartitionPick<'channels'>;

/**
 * A channel's participants and state: from the partition when it holds the channel, else from the index of every
 * channel (`ChannelIndex`, a partitioned deployment's channels of other partitions).
 */
function channelAnywhere(
  ctx: ChannelLookupDeps,
  channelId: string,
): Pick<ChannelMetadata, 'participants' | 'state'> | undefined {
  return ctx.partition.channels.get(channelId)?.metadata ?? ctx.channelIndex.get(channelId);
}

function requireOwner(task: TaskMetadata, callerId: string): void {
  if (task.owner_id !== callerId) {
    throw new AccessDeniedError(`task ${repr(task.task_id)} belongs to ${repr(task.owner_id)}`);
  }
}

function checkTaskChannel(ctx: ChannelLookupDeps, ownerId: string, channelId: string): void {
  const channel = channelAnywhere(ctx, channelId);
  if (channel === undefined) throw channelNotFound(channelId);
  const cid = repr(channelId);
  if (!isParticipant(channel, ownerId)) {
    throw new AccessDeniedError(`${repr(ownerId)} is not a participant of channel ${cid}`);
  }
  if (isTerminalChannelState(channel.state)) throw new ProtocolError(`channel ${cid} is ${channel.state}`);
}

/**
 * The home partition's side of the task ends other partitions asked for (`TaskEnds`): each pending one ends its task
 * (a task already ended is left alone) and its request is removed, under the home lease.
 */
export async function applyTaskEnds(
  ctx: TaskChangeDeps & Pick<HomeStores, 'taskEnds'> & PartitionPick<'mayWrite'>,
): Promise<void> {
  if (!ctx.tasks.writesHere()) return;
  for (const [taskId, end] of [...ctx.taskEnds.pending()]) {
    await endTask(ctx, taskId, { state: TaskState.Cancelled, reason: end.reason });
    await ctx.taskEnds.done(taskId, ctx.partition.mayWrite);
  }
}

/**
 * The home partition's side of AG2's cascade in a partitioned deployment: each open task whose channel, in another
 * partition, the index shows ended expires with `channel_closed` (the channel's owner cannot write tasks).
 */
export async function expireTasksOfEndedChannels(ctx: TaskChangeDeps & ChannelLookupDeps): Promise<void> {
  if (!ctx.tasks.writesHere()) return;
  for (const task of ctx.tasks.open()) {
    if (task.channel_id === null || ctx.partition.channels.get(task.channel_id) !== undefined) continue;
    const channel = ctx.channelIndex.get(task.channel_id);
    if (channel !== undefined && isTerminalChannelState(channel.state)) {
      await endTask(ctx, task.task_id, { state: TaskState.Expired, reason: TaskEndReason.ChannelClosed });
    }
  }
}

/** Tasks move forward: created → running → a terminal state (or created → terminal); never back to created. */
function checkTransition(task: TaskMetadata, next: TaskState): void {
  if (task.state === TaskState.Running && next === TaskState.Created) {
    throw new ProtocolError(`task ${repr(task.task_id)} cannot go from running back to created`);
  }
}

/** Stamps the times a state implies: `started_at` when it runs, `completed_at` when it ends. */
function stamp(task: TaskMetadata, state: TaskState, nowMs: number): TaskMetadata {
  const now = isoAt(nowMs);
  return {
    ...task,
    state,
    started_at: state === TaskState.Running ? (task.started_at ?? now) : task.started_at,
    completed_at: isTerminalTaskState(state) ? (task.completed_at ?? now) : task.completed_at,
  };
}

/**
 * Stores the task; when it just became terminal, audits `task_terminated` and counts its outcome in the owner's
 * observed record for its capability (once per task, whoever reports it first: the hub or the agent's mirror).
 */
async function settle(
  ctx: TaskChangeDeps,
  change: { readonly before: TaskMetadata | null; readonly task: TaskMetadata; readonly reason: string },
): Promise<TaskMetadata> {
  const { before, task, reason } = change;
  await ctx.tasks.put(task);
  const ended = isTerminalTaskState(task.state) && (before === null || !isTerminalTaskState(before.state));
  if (!ended) return task;
  ctx.logger.info({ taskId: task.task_id, state: task.state, reason }, 'task ended');
  await ctx.audit.recordAfter(
    AuditKind.TaskTerminated,
    {
      task_id: task.task_id,
      owner_id: task.owner_id,
      channel_id: task.channel_id,
      outcome: task.state,
      capability: task.spec.capability,
      reason,
    },
    { id: `task_terminated.${task.task_id}`, ...(task.completed_at === null ? {} : { at: task.completed_at }) },
  );
  const capability = task.spec.capability;
  if (capability !== null && ctx.registry.get(task.owner_id) !== undefined) {
    const latency =
      task.started_at === null || task.completed_at === null
        ? null
        : Math.max(0, Date.parse(task.completed_at) - Date.parse(task.started_at));
    await countObservation(ctx, task.owner_id, {
      capability,
      outcome: task.state,
      latency_ms: latency,
      task_id: task.task_id,
    });
  }
  return task;
}
