import type { TaskMetadata } from '@ag2net/protocol';
import { ToolErrorCode, ToolFailure } from '../errors.js';
import { TasksInputSchema } from './schemas.js';
import { defineTool, jsonOutput } from './tool.js';

/** The longest result or progress a task shows, in characters of JSON; longer ones are cut. */
const MAX_TASK_JSON_CHARS = 4_000;

function bounded(value: unknown): unknown {
  if (value === undefined) return null;
  const json = JSON.stringify(value);
  return json.length > MAX_TASK_JSON_CHARS ? `${json.slice(0, MAX_TASK_JSON_CHARS - 1)}…` : value;
}

function showTask(task: TaskMetadata): Record<string, unknown> {
  return {
    task_id: task.task_id,
    owner_id: task.owner_id,
    state: task.state,
    channel_id: task.channel_id,
    spec: bounded(task.spec),
    created_at: task.created_at,
    completed_at: task.completed_at,
    progress: bounded(task.progress),
    result: bounded(task.result),
    error: task.error,
  };
}

/** AG2's `tasks` (list and status): the hub's task records I may see. */
export const tasksTool = defineTool({
  name: 'tasks',
  description:
    "Tasks on the network. list (default): scope own|all, channel_id?, state?, limit. get: task_id → the task's " +
    'state, owner, channel, progress, result or error.',
  input: TasksInputSchema,
  readOnly: true,
  async run(ctx, args) {
    const { participant } = ctx.session;
    const call = { caller: participant.agentId, signal: ctx.signal };
    if (args.action === 'get') {
      if (args.task_id === undefined) throw new ToolFailure(ToolErrorCode.InvalidRequest, 'get needs task_id');
      const { task } = await participant.hub.call('getTask', { task_id: args.task_id }, call);
      return jsonOutput({ task: showTask(task) });
    }
    const { tasks } = await participant.hub.call(
      'listTasks',
      {
        agent_id: args.scope === 'own' ? participant.agentId : null,
        channel_id: args.channel_id ?? null,
        state: args.state ?? null,
        limit: args.limit,
      },
      call,
    );
    return jsonOutput({ tasks: tasks.map(showTask) });
  },
});
