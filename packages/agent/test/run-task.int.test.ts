import { EV_TASK_CANCEL_REQUEST, EV_TASK_CANCELLED, TaskState } from '@ag2net/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TaskCancelledError, currentTask, runTask } from '../src/index.js';
import { tasks } from '../src/tools/tasks.js';
import { netKit, toolAgent, until } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

describe('runTask and the task mirror', () => {
  it('reports a task as running, with progress, then completed with the result, and counts it for the capability', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const seen: { id: string; running: unknown }[] = [];
    const value = await runTask(
      { client: alice.client, title: 'summarise', capability: 'summaries', channelId: null },
      async (task) => {
        const { task: during } = await alice.client.hub.call(
          'getTask',
          { task_id: task.taskId },
          { caller: alice.client.agentId },
        );
        seen.push({ id: task.taskId, running: during.state });
        await task.progress({ step: 1 });
        expect(currentTask()?.taskId).toBe(task.taskId);
        return 'the summary';
      },
    );
    expect(value).toBe('the summary');
    const id = seen[0]?.id ?? '';
    expect(seen[0]?.running).toBe(TaskState.Running);
    const { task } = await alice.client.hub.call('getTask', { task_id: id }, { caller: alice.client.agentId });
    expect(task).toMatchObject({
      task_id: id,
      owner_id: alice.client.agentId,
      state: TaskState.Completed,
      result: 'the summary',
      progress: { step: 1 },
      spec: { title: 'summarise', capability: 'summaries' },
    });
    const resume = await client.getResume(alice.client.agentId);
    expect(resume.observed['summaries']).toMatchObject({ n: 1, completed: 1, failed: 0, expired: 0 });
  });

  it('reports a task whose body throws as failed with the error, and rethrows it', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    let id = '';
    await expect(
      runTask({ client: alice.client, title: 'doomed' }, (task) => {
        id = task.taskId;
        return Promise.reject(new Error('the source was gone'));
      }),
    ).rejects.toThrow('the source was gone');
    const { task } = await alice.client.hub.call('getTask', { task_id: id }, { caller: alice.client.agentId });
    expect(task).toMatchObject({ state: TaskState.Failed, error: 'the source was gone' });
  });

  it('lets the tasks tool report progress and set the result of the task running around it', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const outside = await tasks(alice.ctx(), { action: 'progress', payload: { x: 1 } });
    expect(outside).toBe('Error: progress requires an active `agent.task(...)` block');
    let id = '';
    await runTask({ client: alice.client, title: 'tooling' }, async (task) => {
      id = task.taskId;
      expect(await tasks(alice.ctx(), { action: 'progress', payload: { pct: 50 } })).toBe(
        `progress recorded for task ${task.taskId}`,
      );
      expect(await tasks(alice.ctx(), { action: 'complete', result: { answer: 42 } })).toBe(
        `task ${task.taskId} will complete with this result`,
      );
      return 'ignored';
    });
    const { task } = await alice.client.hub.call('getTask', { task_id: id }, { caller: alice.client.agentId });
    expect(task).toMatchObject({ state: TaskState.Completed, result: { answer: 42 }, progress: { pct: 50 } });
  });

  it('cancels a running task when a participant asks, even while the owner is busy in the same channel', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob');
    const channel = await alice.client.open({ type: 'conversation', target: 'bob' });
    let id = '';
    const running = runTask({ client: bob.client, title: 'long job', channelId: channel.channelId }, async (task) => {
      id = task.taskId;
      await new Promise<void>((resolve) => task.signal.addEventListener('abort', () => resolve(), { once: true }));
      return 'never';
    });
    await until(async () => {
      if (id === '') return false;
      const { task } = await alice.client.hub.call('getTask', { task_id: id }, { caller: alice.client.agentId });
      return task.state === TaskState.Running;
    }, 'the task to run');
    await alice.client.sendEnvelope({
      channel_id: channel.channelId,
      event_type: EV_TASK_CANCEL_REQUEST,
      event_data: { task_id: id, reason: 'taking too long' },
      audience: [bob.client.agentId],
      task_id: id,
    });
    await expect(running).rejects.toEqual(new TaskCancelledError('taking too long'));
    const { task } = await alice.client.hub.call('getTask', { task_id: id }, { caller: alice.client.agentId });
    expect(task).toMatchObject({ state: TaskState.Cancelled, error: 'taking too long' });
    const log = await alice.client.readWal(channel.channelId);
    expect(log.filter((e) => e.event_type === EV_TASK_CANCELLED).map((e) => [e.sender_id, e.event_data])).toEqual([
      [bob.client.agentId, { task_id: id, reason: 'taking too long' }],
    ]);
  });
});
