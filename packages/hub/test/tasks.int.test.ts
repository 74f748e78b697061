import { EV_TASK_CANCELLED, EV_TASK_CANCEL_REQUEST, type HubRequest, type TaskMetadataInput } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  T0,
  at,
  audit,
  auditCount,
  failure,
  openChannel,
  openNet,
  post,
  register,
  startColdHub,
  tickAfter,
  waitForState,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

type TaskFields = Omit<TaskMetadataInput, 'owner_id' | 'created_at'> & { created_at?: string };

async function observe(net: TestNet, owner: TestAgent, task: TaskFields) {
  return (
    await net.rpc.call('observeTask', { task: { created_at: T0, ...task, owner_id: owner.id } }, { caller: owner.id })
  ).task;
}

async function update(net: TestNet, owner: TestAgent, request: HubRequest<'updateTask'>) {
  return (await net.rpc.call('updateTask', request, { caller: owner.id })).task;
}

async function getTask(net: TestNet, caller: TestAgent, taskId: string) {
  return (await net.rpc.call('getTask', { task_id: taskId }, { caller: caller.id })).task;
}

function cancelRequest(cid: string, taskId: string, audience: string[] | null, extra: { task_id?: string } = {}) {
  return {
    channel_id: cid,
    audience,
    event_type: EV_TASK_CANCEL_REQUEST,
    event_data: { task_id: taskId, reason: 'wrap up' },
    task_id: extra.task_id ?? taskId,
  };
}

describe('task lifecycle', () => {
  it('records a running task of its caller with the hub’s start time and the default 15-minute expiry', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const task = await observe(net, alice, { task_id: 'task-1', state: 'running', spec: { title: 'Report' } });
    expect(task).toEqual({
      task_id: 'task-1',
      owner_id: alice.id,
      spec: { title: 'Report', objective: '', capability: null, inputs: {} },
      state: 'running',
      created_at: T0,
      started_at: T0,
      completed_at: null,
      expires_at: at(900_000),
      last_progress_at: null,
      channel_id: null,
      progress: {},
      error: null,
    });
    expect(await getTask(net, alice, 'task-1')).toEqual(task);
  });

  it('refuses a task whose owner is not the caller, and one in a channel the owner is not in or that ended', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    expect(
      await failure(
        net.rpc.call('observeTask', { task: { task_id: 't', owner_id: bob.id, created_at: T0 } }, { caller: alice.id }),
      ),
    ).toEqual({ code: 'auth_failed', message: `owner_id '${bob.id}' does not match the caller '${alice.id}'` });
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    expect(await failure(observe(net, carol, { task_id: 't', channel_id: cid }))).toEqual({
      code: 'access_denied',
      message: `'${carol.id}' is not a participant of channel '${cid}'`,
    });
    await net.rpc.call('closeChannel', { channel_id: cid }, { caller: alice.id });
    expect(await failure(observe(net, bob, { task_id: 't', channel_id: cid }))).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' is closed`,
    });
  });

  it('max_concurrent_tasks refuses one open task too many until one ends; 0 means no cap', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { limits: { max_concurrent_tasks: 1 } } });
    const bob = await register(net, 'bob');
    await observe(net, alice, { task_id: 't1', state: 'running' });
    expect(await failure(observe(net, alice, { task_id: 't2' }))).toEqual({
      code: 'access_denied',
      message: `owner '${alice.id}' exceeded max_concurrent_tasks (1 >= 1)`,
    });
    await update(net, alice, { task_id: 't1', state: 'completed' });
    expect((await observe(net, alice, { task_id: 't2' })).state).toBe('created');
    for (let i = 0; i < 5; i += 1) await observe(net, bob, { task_id: `b${i}`, state: 'running' });
    expect((await net.rpc.call('listTasks', { agent_id: bob.id }, { caller: bob.id })).tasks).toHaveLength(5);
  });

  it('observing a known task again updates it in place, and a failure ends it with its error', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    await observe(net, alice, { task_id: 't', progress: { a: 1 } });
    net.clock.advance(1_000);
    expect(await observe(net, alice, { task_id: 't', state: 'running', progress: { b: 2 } })).toMatchObject({
      state: 'running',
      started_at: at(1_000),
      progress: { a: 1, b: 2 },
    });
    net.clock.advance(1_000);
    expect(await update(net, alice, { task_id: 't', state: 'failed', error: 'model down' })).toMatchObject({
      state: 'failed',
      error: 'model down',
      completed_at: at(2_000),
    });
    expect(await observe(net, alice, { task_id: 'born-done', state: 'cancelled' })).toMatchObject({
      state: 'cancelled',
      started_at: null,
      completed_at: at(2_000),
    });
    const ended = await auditCount(net, { kinds: ['task_terminated'] }, 2);
    expect(ended.map((r) => [r['task_id'], r['outcome'], r['reason']])).toEqual([
      ['t', 'failed', 'model down'],
      ['born-done', 'cancelled', ''],
    ]);
  });

  it('updateTask merges progress, ends the task with its result, and then leaves it alone', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    await observe(net, alice, { task_id: 'task-1', state: 'running' });
    net.clock.advance(1_000);
    await update(net, alice, { task_id: 'task-1', progress: { a: 1 } });
    net.clock.advance(1_000);
    expect(await update(net, alice, { task_id: 'task-1', progress: { b: 2 } })).toMatchObject({
      progress: { a: 1, b: 2 },
      last_progress_at: at(2_000),
    });
    expect(await failure(update(net, alice, { task_id: 'task-1', state: 'created' }))).toEqual({
      code: 'protocol_error',
      message: "task 'task-1' cannot go from running back to created",
    });
    expect(await failure(update(net, bob, { task_id: 'task-1', state: 'failed' }))).toEqual({
      code: 'access_denied',
      message: `task 'task-1' belongs to '${alice.id}'`,
    });
    expect(await failure(update(net, alice, { task_id: 'nope' }))).toEqual({
      code: 'not_found',
      message: 'task not found: nope',
    });
    net.clock.advance(1_000);
    const done = await update(net, alice, { task_id: 'task-1', state: 'completed', result: { answer: 42 } });
    expect(done).toMatchObject({ state: 'completed', result: { answer: 42 }, completed_at: at(3_000) });
    expect(await update(net, alice, { task_id: 'task-1', state: 'failed', error: 'late' })).toEqual(done);
    const [ended, ...more] = await auditCount(net, { kinds: ['task_terminated'] }, 1);
    expect(more).toEqual([]);
    expect(ended).toMatchObject({
      task_id: 'task-1',
      owner_id: alice.id,
      channel_id: null,
      outcome: 'completed',
      capability: null,
      reason: '',
      at: at(3_000),
    });
  });

  it('expires a task with ttl_expired once the owner’s task_ttl_default has passed', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { limits: { task_ttl_default: '1m' } } });
    await observe(net, alice, { task_id: 'short', state: 'running' });
    await observe(net, alice, { task_id: 'long', state: 'running', expires_at: at(3_600_000) });
    await tickAfter(net, 59_999);
    expect((await getTask(net, alice, 'short')).state).toBe('running');
    await tickAfter(net, 1);
    expect(await getTask(net, alice, 'short')).toMatchObject({
      state: 'expired',
      error: 'ttl_expired',
      completed_at: at(60_000),
    });
    expect((await getTask(net, alice, 'long')).state).toBe('running');
    expect((await auditCount(net, { kinds: ['task_terminated'] }, 1)).map((r) => r['reason'])).toEqual(['ttl_expired']);
  });

  it('expires the open tasks of a closed channel with channel_closed and counts the outcome for the capability', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await observe(net, bob, {
      task_id: 'task-bob-1',
      state: 'running',
      channel_id: cid,
      spec: { capability: 'analysis' },
    });
    net.clock.advance(5_000);
    await net.rpc.call('closeChannel', { channel_id: cid }, { caller: alice.id });
    expect(await getTask(net, bob, 'task-bob-1')).toMatchObject({ state: 'expired', error: 'channel_closed' });
    const [record] = await auditCount(net, { kinds: ['task_terminated'] }, 1);
    expect(record).toMatchObject({
      task_id: 'task-bob-1',
      owner_id: bob.id,
      channel_id: cid,
      outcome: 'expired',
      capability: 'analysis',
      reason: 'channel_closed',
    });
    expect((await net.rpc.call('getResume', { agent_id: bob.id })).resume.observed).toEqual({
      analysis: { n: 1, completed: 0, failed: 0, expired: 1, p50_latency_ms: 5_000 },
    });
  });

  it('counts a task’s outcome once in its owner’s resume, whoever reports it, also after a restart', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    await observe(net, alice, { task_id: 'w1', state: 'running', spec: { capability: 'writing' } });
    net.clock.advance(420);
    await update(net, alice, { task_id: 'w1', state: 'completed' });
    const observed = { n: 1, completed: 1, failed: 0, expired: 0, p50_latency_ms: 420 };
    const again = { capability: 'writing', outcome: 'completed', latency_ms: 9_999, task_id: 'w1' } as const;
    expect((await net.rpc.call('recordObservation', again, { caller: alice.id })).resume.observed).toEqual({
      writing: observed,
    });

    await net.hub.close();
    await startColdHub(net);
    expect((await net.rpc.call('recordObservation', again, { caller: alice.id })).resume.observed).toEqual({
      writing: observed,
    });
    // A task without a capability counts under the one its owner names, with the hub's latency.
    await observe(net, alice, { task_id: 'w2', state: 'running' });
    net.clock.advance(100);
    await update(net, alice, { task_id: 'w2', state: 'failed', error: 'broke' });
    const other = await net.rpc.call(
      'recordObservation',
      { ...again, task_id: 'w2', outcome: 'failed' },
      { caller: alice.id },
    );
    expect(other.resume.observed).toEqual({ writing: { ...observed, n: 2, failed: 1, p50_latency_ms: 100 } });
    const sources = (await auditCount(net, { kinds: ['resume_set'] }, 2)).map((r) => [r['source'], r['outcome']]);
    expect(sources).toEqual([
      ['observed', 'completed'],
      ['observed', 'failed'],
    ]);
  });
});

describe('task queries and checkpoints', () => {
  it('shows each caller its own tasks and those of its channels, with AG2’s filters', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await observe(net, alice, { task_id: 'shared', state: 'running', channel_id: cid, created_at: at(1) });
    await observe(net, alice, { task_id: 'private', created_at: at(2) });
    await observe(net, bob, { task_id: 'bobs', channel_id: cid, created_at: at(3) });
    const ids = async (caller: TestAgent, filter: HubRequest<'listTasks'> = {}) =>
      (await net.rpc.call('listTasks', filter, { caller: caller.id })).tasks.map((t) => t.task_id);
    expect(await ids(alice)).toEqual(['shared', 'private', 'bobs']);
    expect(await ids(bob)).toEqual(['shared', 'bobs']);
    expect(await ids(carol)).toEqual([]);
    expect(await ids(alice, { state: 'running' })).toEqual(['shared']);
    expect(await ids(alice, { channel_id: cid })).toEqual(['shared', 'bobs']);
    expect(await ids(alice, { agent_id: bob.id })).toEqual(['bobs']);
    expect(await ids(alice, { limit: 1 })).toEqual(['shared']);
    // A task one may not see is answered as one that does not exist.
    expect(await failure(getTask(net, carol, 'shared'))).toEqual({
      code: 'not_found',
      message: 'task not found: shared',
    });
    expect(await failure(getTask(net, bob, 'private'))).toEqual({
      code: 'not_found',
      message: 'task not found: private',
    });
  });

  it('keeps the owner’s last checkpoint of a task and shows it to the owner only', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await observe(net, alice, { task_id: 'cp', state: 'running' });
    await observe(net, alice, { task_id: 'shared', state: 'running', channel_id: cid });
    const read = (caller: TestAgent, taskId = 'cp') =>
      net.rpc.call('readTaskCheckpoint', { task_id: taskId }, { caller: caller.id }).then((r) => r.state);
    expect(await read(alice)).toBeNull();
    await net.rpc.call('checkpointTask', { task_id: 'cp', state: { step: 1 } }, { caller: alice.id });
    await net.rpc.call(
      'checkpointTask',
      { task_id: 'cp', state: { step: 3, scratch: [1, 2, 3] } },
      { caller: alice.id },
    );
    expect(await read(alice)).toEqual({ step: 3, scratch: [1, 2, 3] });
    // bob may not see alice's task 'cp': it is answered as one that does not exist. He sees 'shared', in his channel,
    // so he may be told whose checkpoint it is.
    expect(await failure(read(bob))).toEqual({ code: 'not_found', message: 'task not found: cp' });
    expect(await failure(read(bob, 'shared'))).toEqual({
      code: 'access_denied',
      message: `task 'shared' belongs to '${alice.id}'`,
    });
    expect(await failure(read(alice, 'ghost'))).toEqual({ code: 'not_found', message: 'task not found: ghost' });
  });
});

describe('task envelopes', () => {
  async function setup(net: TestNet) {
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const other = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await observe(net, bob, { task_id: 'task-bob-1', state: 'running', channel_id: cid });
    await observe(net, bob, { task_id: 'task-bob-2', state: 'running', channel_id: other });
    return { alice, bob, cid };
  }

  it('delivers a cancel_request that names an open task of the channel to its owner', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await setup(net);
    const ack = await post(net, alice, cancelRequest(cid, 'task-bob-1', [bob.id]));
    const delivered = await bob.mailbox.waitFor((e) => e.envelope_id === ack.envelope_id, 'the cancel request');
    expect(delivered).toMatchObject({
      sender_id: alice.id,
      audience: [bob.id],
      task_id: 'task-bob-1',
      event_data: { task_id: 'task-bob-1', reason: 'wrap up' },
    });
  });

  it('refuses a cancel_request for an unknown, foreign or ended task, one that misses the owner, or a mismatched task_id', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await setup(net);
    const refused = (envelope: ReturnType<typeof cancelRequest>) => failure(post(net, alice, envelope));
    expect(await refused(cancelRequest(cid, 'ghost', null))).toEqual({
      code: 'not_found',
      message: 'task not found: ghost',
    });
    expect(await refused(cancelRequest(cid, 'task-bob-2', null))).toEqual({
      code: 'protocol_error',
      message: `task 'task-bob-2' does not belong to channel '${cid}'`,
    });
    expect(await refused(cancelRequest(cid, 'task-bob-1', [alice.id]))).toEqual({
      code: 'protocol_error',
      message: `cancel_request for task 'task-bob-1' must reach its owner '${bob.id}'`,
    });
    expect(await refused(cancelRequest(cid, 'task-bob-1', null, { task_id: 'task-bob-2' }))).toEqual({
      code: 'protocol_error',
      message: "envelope task_id 'task-bob-2' does not match event_data.task_id 'task-bob-1'",
    });
    await update(net, bob, { task_id: 'task-bob-1', state: 'completed' });
    expect(await refused(cancelRequest(cid, 'task-bob-1', null))).toEqual({
      code: 'protocol_error',
      message: "task 'task-bob-1' is already completed",
    });
  });

  it('lets a non-participant ask a task’s owner once to cancel, shaped as AG2 1.2.1 allows, also after a restart', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await setup(net);
    const carol = await register(net, 'carol');
    const outsider = `channel '${cid}' only accepts sends from participants, got '${carol.id}'`;
    const refused = (envelope: Parameters<typeof post>[2]) => failure(post(net, carol, envelope));
    // Only the exact shape passes: addressed to the owner alone, event data exactly { task_id, reason }, a short reason.
    expect(await refused(cancelRequest(cid, 'task-bob-1', null))).toEqual({
      code: 'protocol_error',
      message: outsider,
    });
    expect(
      await refused({ ...cancelRequest(cid, 'task-bob-1', [bob.id]), event_data: { task_id: 'task-bob-1' } }),
    ).toEqual({ code: 'protocol_error', message: outsider });
    const long = { task_id: 'task-bob-1', reason: 'r'.repeat(501) };
    expect(await refused({ ...cancelRequest(cid, 'task-bob-1', [bob.id]), event_data: long })).toEqual({
      code: 'protocol_error',
      message: outsider,
    });
    expect(await refused({ channel_id: cid, event_type: 'ag2.msg.text', event_data: { text: 'hi' } })).toEqual({
      code: 'protocol_error',
      message: `conversation channel '${cid}' only accepts sends from participants, got '${carol.id}'`,
    });

    const request = { ...cancelRequest(cid, 'task-bob-1', [bob.id]), envelope_id: 'carol-asks-1' };
    request.event_data = { task_id: 'task-bob-1', reason: 'r'.repeat(500) };
    const ack = await post(net, carol, request);
    const delivered = await bob.mailbox.waitFor((e) => e.envelope_id === ack.envelope_id, 'the peer cancel request');
    expect(delivered).toMatchObject({ sender_id: carol.id, audience: [bob.id], task_id: 'task-bob-1' });
    // A retry of the same post (its answer lost) gets the same ack; any other one is refused.
    expect(await post(net, carol, request)).toEqual(ack);
    expect(await refused({ ...request, envelope_id: 'carol-asks-2' })).toEqual({
      code: 'protocol_error',
      message: outsider,
    });
    // The once holds on a hub that did not admit the first one.
    await net.hub.close();
    await startColdHub(net);
    await net.hub.whenActive();
    expect(await refused({ ...request, envelope_id: 'carol-asks-3' })).toEqual({
      code: 'protocol_error',
      message: outsider,
    });
    // A participant's own requests are not limited; the task's channel log holds carol's one request, unchanged.
    await post(net, alice, cancelRequest(cid, 'task-bob-1', [bob.id]));
    await post(net, alice, cancelRequest(cid, 'task-bob-1', [bob.id]));
    const log = (await net.rpc.call('readWal', { channel_id: cid }, { caller: bob.id })).envelopes;
    expect(log.filter((e) => e.event_type === EV_TASK_CANCEL_REQUEST).map((e) => e.sender_id)).toEqual([
      carol.id,
      alice.id,
      alice.id,
    ]);
    // carol, outside the channel, still reads nothing of it.
    expect(await failure(net.rpc.call('readWal', { channel_id: cid }, { caller: carol.id }))).toEqual({
      code: 'not_found',
      message: `channel not found: ${cid}`,
    });
  });

  it('ends a task cancelled when its owner posts ag2.task.cancelled, and refuses it from anyone else', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await setup(net);
    const cancelled = (sender: TestAgent) =>
      post(net, sender, {
        channel_id: cid,
        event_type: EV_TASK_CANCELLED,
        event_data: { task_id: 'task-bob-1', reason: 'wrap-up' },
      });
    expect(await failure(cancelled(alice))).toEqual({
      code: 'protocol_error',
      message: `only the owner '${bob.id}' may report task 'task-bob-1' cancelled`,
    });
    net.clock.advance(2_000);
    await cancelled(bob);
    expect(await getTask(net, alice, 'task-bob-1')).toMatchObject({
      state: 'cancelled',
      error: 'wrap-up',
      completed_at: at(2_000),
    });
  });
});

describe('runtime reports', () => {
  it('records a task event and a turn failure in the audit trail', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const payload = { op: 'observe_task', exc_type: 'NotFoundError', exc_message: 'gone' };
    await net.rpc.call('fireTaskEvent', { task_id: 'ghost', kind: 'mirror_failed', payload }, { caller: alice.id });
    const failed = { channel_id: cid, envelope_id: cid, exc_type: 'RuntimeError', exc_message: 'model down' };
    await net.rpc.call('reportTurnFailure', failed, { caller: bob.id });
    expect(await failure(net.rpc.call('reportTurnFailure', failed, { caller: carol.id }))).toEqual({
      code: 'access_denied',
      message: `'${carol.id}' is not a participant of channel '${cid}'`,
    });
    const records = await audit(net, { kinds: ['task_event', 'turn_failed'] });
    expect(records.map(({ id: _id, ...rest }) => rest)).toEqual([
      {
        kind: 'task_event',
        at: T0,
        task_id: 'ghost',
        owner_id: alice.id,
        channel_id: null,
        event: 'mirror_failed',
        payload,
      },
      {
        kind: 'turn_failed',
        at: T0,
        channel_id: cid,
        agent_id: bob.id,
        envelope_id: cid,
        exc_type: 'RuntimeError',
        exc_message: 'model down',
      },
    ]);
  });

  it('a cold hub has the same tasks and still expires a channel’s open tasks when the channel closes', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await observe(net, bob, { task_id: 'kept', state: 'running', channel_id: cid, spec: { capability: 'x' } });
    await observe(net, alice, { task_id: 'done' });
    await update(net, alice, { task_id: 'done', state: 'completed', result: 'ok' });
    const live = structuredClone(net.hub.snapshot());
    await net.hub.close();
    const cold = await startColdHub(net);
    expect(cold.snapshot()).toEqual(live);
    await net.rpc.call('closeChannel', { channel_id: cid }, { caller: bob.id });
    await waitForState(net, cid, 'closed');
    expect((await getTask(net, alice, 'kept')).state).toBe('expired');
  });
});
