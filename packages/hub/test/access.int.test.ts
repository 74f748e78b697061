import { sequence } from '@ag2net/adapters';
import { Access } from '@ag2net/protocol/internal';
import {
  EV_CONTEXT_SET,
  EV_TEXT,
  HUB_OPS,
  HUB_OP_NAMES,
  OPERATOR_CALLER,
  RpcReplySchema,
  newId,
  type HubOp,
} from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  asOperator,
  audit,
  failure,
  openChannel,
  openNet,
  readWal,
  register,
  say,
  waitForState,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** A request each op with a caller would take as it is, on `channel` (alice's, with bob) and alice's task `t1`. */
function requestOf(op: HubOp, ids: { channel: string; alice: string; bob: string }): unknown {
  const { channel, alice, bob } = ids;
  const byOp: Partial<Record<HubOp, unknown>> = {
    renewCredentials: {},
    unregister: {},
    setResume: { resume: { summary: 'x' } },
    setSkill: { skill_md: '# x' },
    setRule: { rule: {} },
    recordObservation: { capability: 'x', outcome: 'completed' },
    createChannel: { type: 'conversation', participants: [bob] },
    listChannels: {},
    pendingTurnsFor: {},
    observeTask: { task: { task_id: 't2', owner_id: alice, created_at: '2026-01-01T00:00:00Z' } },
    updateTask: { task_id: 't1', state: 'running' },
    getTask: { task_id: 't1' },
    listTasks: {},
    checkpointTask: { task_id: 't1', state: { step: 1 } },
    readTaskCheckpoint: { task_id: 't1' },
    fireTaskEvent: { task_id: 't1', kind: 'mirror_failed' },
    post: { channel_id: channel, sender_id: alice, event_type: EV_TEXT, event_data: { text: 'hi' } },
    reportTurnFailure: { channel_id: channel, envelope_id: newId() },
    acquireTurnLock: { channel_id: channel, holder: 'replica-1' },
    renewTurnLock: { channel_id: channel, holder: 'replica-1' },
    releaseTurnLock: { channel_id: channel, holder: 'replica-1' },
    readWal: { channel_id: channel },
    findEnvelopeByCausation: { channel_id: channel, sender_id: alice, causation_id: 'c' },
    readAudit: {},
    deliveryLag: {},
    revokeIdentity: { name_or_id: 'nobody-known' },
    readmitIdentity: { name_or_id: 'nobody-known' },
  };
  return byOp[op] ?? { channel_id: channel };
}

/** The reply error of `op` sent raw as `caller` (bypassing the client), or `'ok'` when the hub accepted it. */
async function attempt(net: TestNet, op: HubOp, caller: string, request: unknown): Promise<string> {
  const msg = await net.nc.request(net.names.rpc(op, caller), JSON.stringify(request), { timeout: 10_000 });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  return reply.ok ? 'ok' : `${reply.error.code}: ${reply.error.message}`;
}

const opsOf = (...classes: Access[]) =>
  HUB_OP_NAMES.filter((op) => HUB_OPS[op].caller && classes.includes(HUB_OPS[op].access));

/** alice and bob in a conversation with one text, alice's task t1, carol registered outside it. */
async function world(net: TestNet): Promise<{ alice: TestAgent; bob: TestAgent; carol: TestAgent; cid: string }> {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const carol = await register(net, 'carol');
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  await say(net, alice, cid, 'hello bob');
  await net.rpc.call(
    'observeTask',
    { task: { task_id: 't1', owner_id: alice.id, created_at: '2026-01-01T00:00:00Z' } },
    { caller: alice.id },
  );
  return { alice, bob, carol, cid };
}

describe('access classes', () => {
  it('refuses an unregistered caller on every self and participant op, and changes nothing', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await world(net);
    const before = { wal: await readWal(net, alice, cid), health: await net.rpc.call('health', {}) };
    const ghost = newId();
    const ops = opsOf(Access.Self, Access.Participant);
    expect(ops.length).toBe(27);
    const ids = { channel: cid, alice: alice.id, bob: bob.id };
    const answers = await Promise.all(ops.map((op) => attempt(net, op, ghost, requestOf(op, ids))));
    expect(answers).toEqual(ops.map(() => `access_denied: unknown caller '${ghost}'`));
    expect(await readWal(net, alice, cid)).toEqual(before.wal);
    expect(await net.rpc.call('health', {})).toMatchObject({
      registered_agents: before.health.registered_agents,
      active_channels: before.health.active_channels,
    });
    expect((await net.rpc.call('listChannels', {}, asOperator)).channels.map((c) => c.channel_id)).toEqual([cid]);
  });

  it('answers a registered non-member’s reads of a channel as an unknown channel, its post as AG2, and refuses its acts', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, carol, cid } = await world(net);
    const ops = opsOf(Access.Participant);
    const ids = { channel: cid, alice: carol.id, bob: bob.id };
    const answers = await Promise.all(ops.map((op) => attempt(net, op, carol.id, requestOf(op, ids))));
    const reads = ['getChannel', 'readWal', 'findEnvelopeByCausation', 'canSend', 'adapterState'];
    expect(answers).toEqual(
      ops.map((op) =>
        reads.includes(op)
          ? `not_found: channel not found: ${cid}`
          : op === 'post'
            ? `protocol_error: conversation channel '${cid}' only accepts sends from participants, got '${carol.id}'`
            : `access_denied: '${carol.id}' is not a participant of channel '${cid}'`,
      ),
    );
    // An unknown channel is not_found for everyone alike: member of something, operator, anyone registered.
    const nowhere = newId();
    for (const caller of [alice.id, carol.id, OPERATOR_CALLER]) {
      expect(await attempt(net, 'readWal', caller, { channel_id: nowhere })).toBe(
        `not_found: channel not found: ${nowhere}`,
      );
    }
    expect((await readWal(net, alice, cid)).map((e) => e.sender_id)).not.toContain(carol.id);
  });

  it('lets participants call participant ops and identities call self ops as themselves', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await world(net);
    const as = { caller: bob.id };
    expect((await net.rpc.call('getChannel', { channel_id: cid }, as)).channel.channel_id).toBe(cid);
    expect((await net.rpc.call('canSend', { channel_id: cid }, as)).allowed).toBe(true);
    expect((await net.rpc.call('adapterState', { channel_id: cid }, as)).state).toMatchObject({ turn_count: 1 });
    expect((await net.rpc.call('readWal', { channel_id: cid }, as)).envelopes.at(-1)?.event_data).toEqual({
      text: 'hello bob',
    });
    expect((await say(net, bob, cid, 'hi alice')).sequence).toBe(5);
    expect((await net.rpc.call('pendingTurnsFor', {}, as)).turns).toEqual([]);
    expect((await net.rpc.call('getTask', { task_id: 't1' }, { caller: alice.id })).task.owner_id).toBe(alice.id);
  });

  it('serves readAudit to the operator only', async () => {
    await using net = await openNet(nats.url);
    const { alice } = await world(net);
    for (const caller of [alice.id, newId()]) {
      expect(await attempt(net, 'readAudit', caller, {})).toBe('access_denied: operator only');
    }
    expect((await audit(net, { kinds: ['agent_registered'] })).map((r) => r['agent_id'])).toContain(alice.id);
  });

  it('refuses the operator on every op that is not an operator read, and serves it every one that is', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid } = await world(net);
    const ids = { channel: cid, alice: alice.id, bob: bob.id };
    const writes = HUB_OP_NAMES.filter((op) => HUB_OPS[op].caller && !HUB_OPS[op].operatorReads);
    const refused = await Promise.all(writes.map((op) => attempt(net, op, OPERATOR_CALLER, requestOf(op, ids))));
    expect(refused).toEqual(writes.map((op) => `access_denied: ${op} is not an operator operation`));
    const reads = HUB_OP_NAMES.filter((op) => HUB_OPS[op].operatorReads);
    expect(reads.length).toBe(11);
    const served = await Promise.all(reads.map((op) => attempt(net, op, OPERATOR_CALLER, requestOf(op, ids))));
    // Revoking or re-admitting an identity nobody registered is the operator's to ask, and answered as no agent.
    expect(served).toEqual(
      reads.map((op) =>
        op === 'revokeIdentity' || op === 'readmitIdentity' ? 'not_found: agent not found: nobody-known' : 'ok',
      ),
    );
    expect((await net.rpc.call('listTasks', {}, asOperator)).tasks.map((t) => t.task_id)).toEqual(['t1']);
    expect((await net.rpc.call('getTask', { task_id: 't1' }, asOperator)).task.owner_id).toBe(alice.id);
  });

  it('answers a caller token that is neither an identity id nor the operator with invalid_request', async () => {
    await using net = await openNet(nats.url);
    const { cid } = await world(net);
    expect(await attempt(net, 'getChannel', '$admin', { channel_id: cid })).toBe(
      "invalid_request: caller in subject is invalid: '$admin'",
    );
  });
});

describe('a post from outside a channel', () => {
  /** What `outsider` is answered when it says something in `cid`, as `code: message` with the ids named. */
  async function refusal(net: TestNet, outsider: TestAgent, cid: string, extra = {}): Promise<string> {
    const { code, message } = await failure(say(net, outsider, cid, 'let me in', extra));
    return `${code}: ${message}`;
  }

  it('is refused with the AG2 ProtocolError of each channel type, and the log is unchanged', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const erin = await register(net, 'erin');
    const dave = await register(net, 'dave');
    const conversation = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const consulting = (await openChannel(net, alice, 'consulting', [bob])).channel_id;
    const discussion = (await openChannel(net, alice, 'discussion', [bob, erin])).channel_id;
    const graph = sequence([bob.id, alice.id]).toDict();
    const workflow = (await openChannel(net, alice, 'workflow', [bob], { knobs: { graph } })).channel_id;
    const before = await Promise.all(
      [conversation, consulting, discussion, workflow].map((cid) => readWal(net, alice, cid)),
    );

    expect({
      conversation: await refusal(net, dave, conversation),
      consulting: await refusal(net, dave, consulting),
      discussion: await refusal(net, dave, discussion),
      workflow: await refusal(net, dave, workflow),
      context: await refusal(net, dave, workflow, { event_type: EV_CONTEXT_SET, event_data: { set: { x: 1 } } }),
      custom: await refusal(net, dave, discussion, { event_type: 'acme.note', event_data: { note: 'hi' } }),
    }).toEqual({
      conversation: `protocol_error: conversation channel '${conversation}' only accepts sends from participants, got '${dave.id}'`,
      consulting: `protocol_error: consulting channel '${consulting}' expects first send from initiator '${alice.id}', got '${dave.id}'`,
      discussion: `protocol_error: discussion channel '${discussion}' expects '${alice.id}' to speak, got '${dave.id}'`,
      workflow: `protocol_error: workflow '${workflow}' expects '${bob.id}' to speak, got '${dave.id}'`,
      context: `protocol_error: workflow '${workflow}' only accepts EV_CONTEXT_SET from participants, got '${dave.id}'`,
      custom: `protocol_error: channel '${discussion}' only accepts sends from participants, got '${dave.id}'`,
    });
    const after = await Promise.all(
      [conversation, consulting, discussion, workflow].map((cid) => readWal(net, alice, cid)),
    );
    expect(after).toEqual(before);
  });

  it('follows the turns: the consulting reply is the respondent’s, the discussion moves on', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const erin = await register(net, 'erin');
    const dave = await register(net, 'dave');
    const consulting = (await openChannel(net, alice, 'consulting', [bob])).channel_id;
    const discussion = (await openChannel(net, alice, 'discussion', [bob, erin])).channel_id;
    await say(net, alice, consulting, 'a question');
    await say(net, alice, discussion, 'first');
    expect([await refusal(net, dave, consulting), await refusal(net, dave, discussion)]).toEqual([
      `protocol_error: consulting channel '${consulting}' expects reply from respondent '${bob.id}', got '${dave.id}'`,
      `protocol_error: discussion channel '${discussion}' expects '${bob.id}' to speak, got '${dave.id}'`,
    ]);
  });

  it('is refused as AG2 refuses any post to a closed channel', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const dave = await register(net, 'dave');
    const cid = (await openChannel(net, alice, 'discussion', [bob])).channel_id;
    await net.rpc.call('closeChannel', { channel_id: cid }, { caller: alice.id });
    await waitForState(net, cid, 'closed');
    expect([await refusal(net, dave, cid), await refusal(net, alice, cid)]).toEqual([
      `protocol_error: channel '${cid}' is closed`,
      `protocol_error: channel '${cid}' is closed`,
    ]);
  });

  it('learns nothing of the channel’s envelope ids: a taken id is answered as any other post', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const dave = await register(net, 'dave');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const taken = (await say(net, alice, cid, 'hello')).envelope_id;
    const refused = `protocol_error: conversation channel '${cid}' only accepts sends from participants, got '${dave.id}'`;
    expect([
      await refusal(net, dave, cid, { envelope_id: taken }),
      await refusal(net, dave, cid, { envelope_id: newId() }),
    ]).toEqual([refused, refused]);
    // A participant proposing the same id is told it is taken: the refusal above was not that answer.
    expect(await refusal(net, bob, cid, { envelope_id: taken })).toBe(
      `conflict: envelope_id '${taken}' is already taken in channel '${cid}'`,
    );
  });

  it('names the caller, not the sender its body claims: a body in another’s name is auth_failed', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const dave = await register(net, 'dave');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const forged = { channel_id: cid, sender_id: bob.id, event_type: EV_TEXT, event_data: { text: 'as bob' } };
    expect(await attempt(net, 'post', dave.id, forged)).toBe(
      `auth_failed: sender_id '${bob.id}' does not match the caller '${dave.id}'`,
    );
  });
});
