import type { AgentClient } from '@ag2net/client';
import type { TaskDirectory } from '../tools/context.js';

/** The hub's task records as `client` may see them (the `getTask` and `listTasks` operations). */
export function hubTaskDirectory(client: Pick<AgentClient, 'agentId' | 'hub'>): TaskDirectory {
  return {
    getTask: async (taskId) => (await client.hub.call('getTask', { task_id: taskId }, { caller: client.agentId })).task,
    listTasks: async ({ ownerId, limit }) =>
      (await client.hub.call('listTasks', { agent_id: ownerId, limit }, { caller: client.agentId })).tasks,
  };
}
