import { TaskStateSchema, type TaskMetadata, type HubResponse } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { IntFlag, NoOptions, action, actionOn } from '../env.js';
import type { CliIo } from '../io.js';
import type { Tone } from '../output.js';
import { NameBook, shortTime } from '../render.js';
import { resolveChannelId, resolveTaskId } from '../resolve.js';

const LsOptions = z.object({
  state: TaskStateSchema.optional(),
  agent: z.string().optional(),
  channel: z.string().optional(),
  limit: IntFlag.default(100),
});

/** The hub's largest page of `listTasks`. */
const PAGE = 1000;

/** `ag2net tasks ls|show`: tasks the caller owns or shares a channel with; every task with `--operator`. */
export function tasksCommand(program: Command, io: CliIo): void {
  const tasks = program
    .command('tasks')
    .description('tasks the caller may see (every task with --operator); without a subcommand, ls');
  tasks
    .command('ls', { isDefault: true })
    .description('tasks, oldest first (the default)')
    .option('--state <state>', 'created, running, completed, failed, expired or cancelled')
    .option('--agent <agent>', 'only tasks owned by this agent (name or id)')
    .option('--channel <channel>', 'only tasks of this channel (id, or the start of one)')
    .option('--limit <n>', 'at most this many (default 100)')
    .action(
      action(io, LsOptions, async (env, opts) => {
        const session = await env.session();
        const caller = await session.requireCaller('tasks ls');
        const agentId = opts.agent === undefined ? null : await session.agentId(opts.agent);
        const channelId =
          opts.channel === undefined ? null : await resolveChannelId(session.hub, opts.channel, { caller });
        const list: TaskMetadata[] = [];
        let cursor: string | null = null;
        do {
          const page: HubResponse<'listTasks'> = await session.hub.call(
            'listTasks',
            {
              agent_id: agentId,
              channel_id: channelId,
              state: opts.state ?? null,
              limit: Math.min(PAGE, opts.limit - list.length),
              cursor,
            },
            { caller },
          );
          list.push(...page.tasks);
          cursor = page.next_cursor;
        } while (cursor !== null && list.length < opts.limit);
        if (env.out.json) return env.out.data(list);
        const names = new NameBook(session.hub);
        const rows = await Promise.all(list.map(async (t) => ({ t, owner: await names.name(t.owner_id) })));
        env.out.table(
          rows,
          [
            { header: 'id', cell: (r) => r.t.task_id },
            { header: 'owner', cell: (r) => r.owner, tone: () => 'accent' },
            { header: 'state', cell: (r) => r.t.state, tone: (r) => taskTone(r.t) },
            { header: 'channel', cell: (r) => r.t.channel_id ?? '-' },
            { header: 'created', cell: (r) => shortTime(r.t.created_at) },
            { header: 'error', cell: (r) => r.t.error ?? '', max: 40 },
          ],
          'no tasks',
        );
      }),
    );
  tasks
    .command('show')
    .description('one task')
    .argument('<task>', 'task id, or the start of one')
    .action(
      actionOn(io, NoOptions, async (env, arg) => {
        const session = await env.session();
        const caller = await session.requireCaller('tasks show');
        const task = await resolveTaskId(session.hub, arg, { caller });
        const t = (await session.hub.call('getTask', { task_id: task }, { caller })).task;
        if (env.out.json) return env.out.data(t);
        const o = env.out;
        const names = new NameBook(session.hub);
        o.fields([
          ['id', t.task_id],
          ['owner', `${await names.name(t.owner_id)} (${t.owner_id})`],
          ['state', o.paint(taskTone(t) ?? 'ok', t.state)],
          ['channel', t.channel_id ?? '-'],
          ['created', t.created_at],
          ['started', t.started_at ?? '-'],
          ['completed', t.completed_at ?? '-'],
          ['expires', t.expires_at ?? '-'],
          ['error', t.error ?? '-'],
        ]);
        o.line();
        o.line(o.paint('head', 'spec'));
        o.line(JSON.stringify(t.spec, null, 2));
        if (Object.keys(t.progress).length > 0) {
          o.line(o.paint('head', 'progress'));
          o.line(JSON.stringify(t.progress, null, 2));
        }
        if (t.result !== undefined) {
          o.line(o.paint('head', 'result'));
          o.line(JSON.stringify(t.result, null, 2));
        }
      }),
    );
}

function taskTone(t: TaskMetadata): Tone | null {
  if (t.state === 'completed') return 'ok';
  if (t.state === 'failed' || t.state === 'expired') return 'bad';
  if (t.state === 'cancelled') return 'dim';
  return 'warn';
}
