import { TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { Actor } from '../route.js';
import { allChannels } from '../channel-pages.js';
import { contextChannel, readChannelTasks } from './task-log.js';
import { toA2aTask, type TaskParties, type TaskView } from './task-fold.js';

/** Tasks in one page of `tasks/list` unless the client asks for fewer (at most `MAX_PAGE_SIZE`). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** The caller's channels read for a list without a context: the most recent of the hub's first page. */
const LIST_CHANNELS = 50;
/** Requests read per channel. */
const TASKS_PER_CHANNEL = 500;

/** When a task last changed: its deciding envelope's admission, else its request's. */
function changedAt(view: TaskView): string {
  return (view.decidedBy ?? view.request).created_at;
}

function decodeOffset(token: string): number {
  if (token === '') return 0;
  if (!/^\d{1,9}$/.test(token)) throw new RequestMalformedError('pageToken is not one this bridge gave');
  return Number(token);
}

/**
 * The caller's tasks with the agent, most recently changed first: those of `contextId` when given, else of the
 * caller's most recent channels with the agent, filtered by state and by `statusTimestampAfter`. The page token is
 * an offset into that order, so a page read from another replica continues the same list.
 */
export async function listTasks(
  actor: Actor,
  parties: TaskParties,
  params: ListTasksRequest,
): Promise<ListTasksResponse> {
  const pageSize = Math.min(Math.max(params.pageSize ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
  const offset = decodeOffset(params.pageToken);
  let channelIds: string[];
  if (params.contextId !== '') {
    channelIds = [(await contextChannel(actor, parties, { contextId: params.contextId })).channel_id];
  } else {
    channelIds = (await allChannels(actor.hub, {}, 500))
      .filter((c) => c.expired_at === undefined && c.participants.some((p) => p.agent_id === parties.agentId))
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .slice(0, LIST_CHANNELS)
      .map((c) => c.channel_id);
  }
  const views: TaskView[] = [];
  for (const channelId of channelIds) {
    views.push(...(await readChannelTasks(actor, parties, { channelId, limit: TASKS_PER_CHANNEL })));
  }
  const after = params.statusTimestampAfter;
  const matching = views
    .filter((v) => params.status === TaskState.TASK_STATE_UNSPECIFIED || v.state === params.status)
    .filter((v) => after === undefined || changedAt(v) > after)
    .sort((a, b) => changedAt(b).localeCompare(changedAt(a)));
  const page = matching.slice(offset, offset + pageSize);
  return {
    tasks: page.map((v) => {
      const task = toA2aTask(v, params.historyLength);
      return params.includeArtifacts === true ? task : { ...task, artifacts: [] };
    }),
    nextPageToken: offset + pageSize < matching.length ? String(offset + pageSize) : '',
    pageSize,
    totalSize: matching.length,
  };
}
