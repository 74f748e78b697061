import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { AccessDeniedError, NotFoundError, type ChannelMetadata, type Envelope } from '@ag2net/protocol';
import { isHistoryExpired } from '@ag2net/client';
import type { Actor } from '../route.js';
import { hubNoLongerServes } from '../session-end.js';
import { pause, type StreamWait } from '../streams.js';
import {
  isRequestOf,
  isSettled,
  openTask,
  parseTaskId,
  stepTask,
  type TaskParties,
  type TaskView,
} from './task-fold.js';

/** Envelopes read per `readWal` call while folding or following a task. */
const PAGE = 200;

/** One answer for a task or context that does not exist and one the caller may not see: no existence oracle. */
export function noSuchTask(id: string): Error {
  return new TaskNotFoundError(`no task or context ${JSON.stringify(id)} for this caller`);
}

/**
 * Runs a hub read or write as the caller, answering not-found for what the caller may not see (the hub's not_found
 * and access_denied, and a history that expired) the same way.
 */
export async function asCaller<T>(id: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    // A caller the hub no longer serves is told so (its session is over), not that the id is unknown.
    if (hubNoLongerServes(err)) throw err;
    if (err instanceof NotFoundError || err instanceof AccessDeniedError || isHistoryExpired(err)) throw noSuchTask(id);
    throw err;
  }
}

/**
 * The channel of a context the caller shares with the agent; not-found for any other, naming `asked` (the context,
 * or the task the caller asked for).
 */
export async function contextChannel(
  actor: Actor,
  parties: TaskParties,
  ids: { contextId: string; asked?: string },
): Promise<ChannelMetadata> {
  const asked = ids.asked ?? ids.contextId;
  const { channel } = await asCaller(asked, () => actor.hub.call('getChannel', { channel_id: ids.contextId }));
  const members = new Set(channel.participants.map((p) => p.agent_id));
  if (!members.has(parties.callerId) || !members.has(parties.agentId)) throw noSuchTask(asked);
  return channel;
}

/** A task as the log says it now, and the sequence to follow it from. */
export interface TaskRead {
  readonly view: TaskView;
  readonly channel: ChannelMetadata;
  /** The first sequence not folded yet. */
  readonly next: number;
}

/** Folds `view` with the log from `since` until the end (or until it settles); the next sequence to read. */
async function foldFrom(
  actor: Actor,
  parties: TaskParties,
  start: { view: TaskView; since: number },
): Promise<{ view: TaskView; next: number }> {
  let { view, since } = start;
  for (;;) {
    const page = await actor.hub.call('readWal', { channel_id: view.channelId, since, limit: PAGE });
    for (const envelope of page.envelopes) {
      view = stepTask(view, envelope, parties);
      since = (envelope.sequence ?? since) + 1;
      if (isSettled(view.state)) return { view, next: since };
    }
    if (page.next_since === null) return { view, next: Math.max(since, page.last_sequence + 1) };
    since = page.next_since;
  }
}

/**
 * Reads task `taskId` from its channel's log as the caller: its request (a text of the caller at the task's
 * sequence, in a channel with the agent) and everything after it. Not-found for anything else.
 */
export async function readTask(actor: Actor, parties: TaskParties, taskId: string): Promise<TaskRead> {
  const parsed = parseTaskId(taskId);
  if (parsed === null) throw noSuchTask(taskId);
  const channel = await contextChannel(actor, parties, { contextId: parsed.channelId, asked: taskId });
  const first = await asCaller(taskId, () =>
    actor.hub.call('readWal', { channel_id: parsed.channelId, since: parsed.sequence, limit: 1 }),
  );
  const request = first.envelopes[0];
  if (request?.sequence !== parsed.sequence || !isRequestOf(request, parties.callerId)) throw noSuchTask(taskId);
  const folded = await asCaller(taskId, () =>
    foldFrom(actor, parties, { view: openTask(parsed.channelId, request), since: parsed.sequence + 1 }),
  );
  return { view: folded.view, channel, next: folded.next };
}

/**
 * The channel's envelopes from `since` on, as the caller may read them, in order, waiting for more at the end (woken
 * by a delivery to the caller, else every `pollMs`) until `wait.signal` aborts. `break` stops it.
 */
export async function* followLog(
  actor: Actor,
  start: { channelId: string; since: number; wait: StreamWait },
): AsyncGenerator<Envelope, void, undefined> {
  const { channelId, wait } = start;
  let since = start.since;
  for (;;) {
    const page = await actor.hub.call('readWal', { channel_id: channelId, since, limit: PAGE });
    for (const envelope of page.envelopes) {
      since = (envelope.sequence ?? since) + 1;
      yield envelope;
    }
    if (page.next_since !== null) {
      since = page.next_since;
      continue;
    }
    since = Math.max(since, page.last_sequence + 1);
    if (!(await pause(wait, (e) => e.channel_id === channelId))) return;
  }
}

/** Every request of the caller in a channel's log (up to `limit`), folded to what the log says of each now. */
export async function readChannelTasks(
  actor: Actor,
  parties: TaskParties,
  options: { channelId: string; limit: number },
): Promise<TaskView[]> {
  const tasks: TaskView[] = [];
  let since = 1;
  for (;;) {
    const page = await actor.hub.call('readWal', { channel_id: options.channelId, since, limit: PAGE });
    for (const envelope of page.envelopes) {
      for (const [i, view] of tasks.entries()) tasks[i] = stepTask(view, envelope, parties);
      if (isRequestOf(envelope, parties.callerId) && tasks.length < options.limit) {
        tasks.push(openTask(options.channelId, envelope));
      }
    }
    if (page.next_since === null) return tasks;
    since = page.next_since;
  }
}
