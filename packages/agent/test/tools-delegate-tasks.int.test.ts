import { ackInvite, isInviteFor } from '@ag2net/client';
import { EV_TASK_CANCEL_REQUEST, EV_TEXT, TaskState, type TaskMetadataInput } from '@ag2net/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createScriptedModel, registerAgent } from '../src/index.js';
import { delegate } from '../src/tools/delegate.js';
import { tasks } from '../src/tools/tasks.js';
import { netKit, toolAgent, type ToolAgent } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

describe('delegate', () => {
  it('fails fast when the target is the caller itself, opening no channel', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    expect(await delegate(alice.ctx(), { target: 'alice', prompt: 'hi' })).toBe(
      "Error: cannot delegate to self (target 'alice' is this agent)",
    );
    expect(await delegate(alice.ctx(), { target: alice.client.agentId, prompt: 'hi' })).toBe(
      `Error: cannot delegate to self (target '${alice.client.agentId}' is this agent)`,
    );
    expect(await alice.client.listChannels({ agent_id: alice.client.agentId })).toEqual([]);
  });

  it('lists the peers that exist when the target does not', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    expect(await delegate(alice.ctx(), { target: 'evaluator', prompt: 'hi' })).toBe(
      "Error: target 'evaluator' not found",
    );
    await toolAgent(client, 'translator');
    await client.registerHuman({ name: 'evaluatr' });
    expect(await delegate(alice.ctx(), { target: 'functions.evaluator', prompt: 'hi' })).toBe(
      "Error: target 'functions.evaluator' not found. Available targets: [evaluatr, translator]",
    );
  });

  it('resolves a target the LLM wrote with a functions. prefix and records the capability knob', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await registerAgent(client, new Agent({ name: 'bob', model: createScriptedModel(['4']) }));
    expect(await delegate(alice.ctx(null, 2), { target: 'functions.bob', prompt: '2+2?', capability: 'math' })).toBe(
      '4',
    );
    const [consulting] = await bob.listChannels({ agent_id: bob.agentId });
    expect(consulting?.knobs).toEqual({ capability: 'math' });
    const prompt = (await alice.client.readWal(consulting?.channel_id ?? '')).find((e) => e.event_type === EV_TEXT);
    expect(prompt?.depth).toBe(3);
  });

  it('gives up after the timeout when the target never answers', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    await toolAgent(client, 'bob');
    expect(await delegate(alice.ctx(), { target: 'bob', prompt: 'hello?', timeout: 0.2 })).toBe(
      "Error: delegate to 'bob' timed out after 0.2s",
    );
  });

  it('stops waiting when the turn is cancelled, long before its timeout', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    await toolAgent(client, 'bob');
    const cancelled = new AbortController();
    cancelled.abort(new Error('turn cancelled'));
    expect(
      await delegate({ ...alice.ctx(), signal: cancelled.signal }, { target: 'bob', prompt: 'hello?', timeout: 600 }),
    ).toBe("Error: delegate to 'bob' cancelled with the turn");
  });

  it('reports the close reason when the channel ends before a reply', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    await client.register(
      { name: 'bob' },
      {
        // Accepts the invite, then closes the channel instead of answering.
        handler: async (e, bob) => {
          if (isInviteFor(bob, e)) await ackInvite(bob, e);
          if (e.event_type === EV_TEXT) await bob.closeChannel(e.channel_id, 'not today');
        },
      },
    );
    expect(await delegate(alice.ctx(), { target: 'bob', prompt: 'hello?' })).toBe(
      "Error: delegate to 'bob' channel closed: not today",
    );
  });
});

describe('tasks', () => {
  const T = '2026-01-01T00:00:00.000Z';
  const observe = (owner: ToolAgent, task: Omit<TaskMetadataInput, 'owner_id' | 'created_at'>) =>
    owner.client.hub.call(
      'observeTask',
      { task: { ...task, owner_id: owner.client.agentId, created_at: T } },
      { caller: owner.client.agentId },
    );

  it("lists, reads and waits for a peer's task in a shared channel", async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob');
    const channel = await alice.client.open({ type: 'conversation', target: 'bob' });
    await observe(bob, { task_id: 'task-bob-1', channel_id: channel.channelId, state: TaskState.Running });
    await bob.client.hub.call(
      'updateTask',
      { task_id: 'task-bob-1', state: TaskState.Completed, result: 'ok' },
      { caller: bob.client.agentId },
    );
    const status = await tasks(alice.ctx(), { action: 'status', task_id: 'task-bob-1' });
    expect(status).toMatchObject({
      task_id: 'task-bob-1',
      owner_id: bob.client.agentId,
      title: '',
      capability: null,
      state: 'completed',
      result: 'ok',
      error: null,
    });
    expect(await tasks(alice.ctx(), { action: 'wait', task_id: 'task-bob-1' })).toEqual(status);
    expect(await tasks(alice.ctx(), { action: 'list', scope: 'all', state: 'all' })).toEqual([status]);
    expect(await tasks(alice.ctx(), { action: 'list', scope: 'all' })).toEqual([]);
    expect(await tasks(alice.ctx(), { action: 'list' })).toEqual([]);
    expect(await tasks(alice.ctx(), { action: 'status', task_id: 'nope' })).toBe("Error: task 'nope' not found");
    expect(await tasks(alice.ctx(), { action: 'cancel', task_id: 'task-bob-1' })).toBe(
      "task 'task-bob-1' is already completed",
    );
  });

  it('posts a cancel request to the owner of a running task in its channel', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob');
    const channel = await alice.client.open({ type: 'conversation', target: 'bob' });
    await observe(bob, { task_id: 'task-bob-2', channel_id: channel.channelId, state: TaskState.Running });
    expect(await tasks(alice.ctx(), { action: 'cancel', task_id: 'task-bob-2', reason: 'wrap up' })).toBe(
      `cancel_request posted to ${bob.client.agentId} for task task-bob-2`,
    );
    const requests = (await alice.client.readWal(channel.channelId)).filter(
      (e) => e.event_type === EV_TASK_CANCEL_REQUEST,
    );
    expect(requests.map((e) => [e.sender_id, e.audience, e.task_id, e.event_data])).toEqual([
      [alice.client.agentId, [bob.client.agentId], 'task-bob-2', { task_id: 'task-bob-2', reason: 'wrap up' }],
    ]);
    expect(await tasks(alice.ctx(), { action: 'wait', task_id: 'task-bob-2', timeout: 0 })).toBe(
      "Error: task 'task-bob-2' did not complete within 0.0s",
    );
  });

  it('answers the actions it cannot perform with error strings', async () => {
    const { client } = await kit.open();
    const bob = await toolAgent(client, 'bob');
    await observe(bob, { task_id: 'task-bob-3', state: TaskState.Running });
    expect(await tasks(bob.ctx(), { action: 'cancel', task_id: 'task-bob-3' })).toBe(
      "Error: task 'task-bob-3' has no associated channel; cancel_request envelopes need a channel to ride on",
    );
    expect(await tasks(bob.ctx(), { action: 'cancel' })).toBe('Error: cancel requires `task_id`');
    expect(await tasks(bob.ctx(), { action: 'cancel', task_id: 'nope' })).toBe("Error: task 'nope' not found");
    expect(await tasks(bob.ctx(), { action: 'progress', payload: { pct: 50 } })).toBe(
      'Error: progress requires an active `agent.task(...)` block',
    );
    expect(await tasks(bob.ctx(), { action: 'complete' })).toBe(
      'Error: complete requires an active `agent.task(...)` block',
    );
    expect(await tasks(bob.ctx(), { action: 'list' })).toMatchObject([{ task_id: 'task-bob-3', state: 'running' }]);
    expect(await tasks({ ...bob.ctx(), tasks: null }, { action: 'status', task_id: 'task-bob-3' })).toBe(
      'Error: no task records are available to this agent',
    );
  });
});
