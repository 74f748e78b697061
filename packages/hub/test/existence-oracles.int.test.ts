import { RpcReplySchema, newId, type HubOp } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ULID, failure, openChannel, openNet, register, say, settle, type TestAgent, type TestNet } from './support.js';

const nats = natsPerFile();

/**
 * A discussion alice → bob → carol where alice asks everyone and bob answers alice alone; alice's task `channelTask`
 * in that channel and her task `privateTask` in none. mallory is registered and takes part in nothing.
 */
async function world(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const carol = await register(net, 'carol');
  const mallory = await register(net, 'mallory');
  const cid = (await openChannel(net, alice, 'discussion', [bob, carol])).channel_id;
  const question = await say(net, alice, cid, 'what is the plan?');
  await say(net, bob, cid, 'between us: plan b', { audience: [alice.id], causation_id: question.envelope_id });
  const channelTask = newId();
  const privateTask = newId();
  for (const [taskId, channelId] of [
    [channelTask, cid],
    [privateTask, null],
  ] as const) {
    const task = { task_id: taskId, owner_id: alice.id, channel_id: channelId, created_at: '2026-01-01T00:00:00Z' };
    await net.rpc.call('observeTask', { task }, { caller: alice.id });
  }
  await settle(net, cid);
  return { alice, bob, carol, mallory, cid, question: question.envelope_id, channelTask, privateTask };
}

type World = Awaited<ReturnType<typeof world>>;

/** One read of something `caller` may not see: `hidden` names it; `request` puts an id where it goes. */
interface Probe {
  readonly name: string;
  readonly op: HubOp;
  readonly caller: (w: World) => TestAgent;
  readonly hidden: (w: World) => string;
  readonly request: (id: string, w: World) => object;
}

/** Every read that names a task, a channel or an envelope, each for a caller that may not see the one it names. */
const PROBES: readonly Probe[] = [
  {
    name: 'getTask of a task in a channel one is not in',
    op: 'getTask',
    caller: (w) => w.mallory,
    hidden: (w) => w.channelTask,
    request: (id) => ({ task_id: id }),
  },
  {
    name: 'getTask of a task in no channel, by someone who shares a channel with its owner',
    op: 'getTask',
    caller: (w) => w.bob,
    hidden: (w) => w.privateTask,
    request: (id) => ({ task_id: id }),
  },
  {
    name: 'readTaskCheckpoint of another’s task',
    op: 'readTaskCheckpoint',
    caller: (w) => w.mallory,
    hidden: (w) => w.privateTask,
    request: (id) => ({ task_id: id }),
  },
  {
    name: 'getChannel',
    op: 'getChannel',
    caller: (w) => w.mallory,
    hidden: (w) => w.cid,
    request: (id) => ({ channel_id: id }),
  },
  {
    name: 'readWal',
    op: 'readWal',
    caller: (w) => w.mallory,
    hidden: (w) => w.cid,
    request: (id) => ({ channel_id: id }),
  },
  {
    name: 'adapterState',
    op: 'adapterState',
    caller: (w) => w.mallory,
    hidden: (w) => w.cid,
    request: (id) => ({ channel_id: id }),
  },
  {
    name: 'canSend',
    op: 'canSend',
    caller: (w) => w.mallory,
    hidden: (w) => w.cid,
    request: (id) => ({ channel_id: id }),
  },
  {
    name: 'findEnvelopeByCausation in a channel one is not in',
    op: 'findEnvelopeByCausation',
    caller: (w) => w.mallory,
    hidden: (w) => w.cid,
    request: (id, w) => ({ channel_id: id, sender_id: w.bob.id, causation_id: w.question }),
  },
  {
    name: 'findEnvelopeByCausation of an envelope outside one’s audience',
    op: 'findEnvelopeByCausation',
    caller: (w) => w.carol,
    hidden: (w) => w.question,
    request: (id, w) => ({ channel_id: w.cid, sender_id: w.bob.id, causation_id: id }),
  },
  {
    name: 'listTasks filtered by a channel one is not in',
    op: 'listTasks',
    caller: (w) => w.mallory,
    hidden: (w) => w.cid,
    request: (id) => ({ channel_id: id }),
  },
  {
    name: 'listTasks filtered by an owner whose tasks one may not see',
    op: 'listTasks',
    caller: (w) => w.mallory,
    hidden: (w) => w.alice.id,
    request: (id) => ({ agent_id: id }),
  },
  {
    name: 'listChannels filtered by an agent one shares no channel with',
    op: 'listChannels',
    caller: (w) => w.mallory,
    hidden: (w) => w.alice.id,
    request: (id) => ({ agent_id: id }),
  },
];

/**
 * The whole reply to `request` on the wire (the result, or the error's code, message and details), with the id the
 * caller sent written `<id>`: what a caller can compare between two ids.
 */
async function wireAnswer(net: TestNet, probe: Probe, w: World, id: string): Promise<unknown> {
  const subject = net.names.rpc(probe.op, probe.caller(w).id);
  const msg = await net.nc.request(subject, JSON.stringify(probe.request(id, w)), { timeout: 10_000 });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  return JSON.parse(JSON.stringify(reply).replaceAll(id, '<id>'));
}

const notFound = (what: string) => ({ ok: false, error: { code: 'not_found', message: `${what} not found: <id>` } });

describe('no read tells a hidden thing from a missing one', () => {
  it('answers every read of a hidden task, channel or envelope exactly as the read of a random id', async () => {
    await using net = await openNet(nats.url);
    const w = await world(net);
    const hidden = await Promise.all(PROBES.map((p) => wireAnswer(net, p, w, p.hidden(w))));
    const empty = { ok: true, result: { tasks: [], next_cursor: null } };
    expect(Object.fromEntries(PROBES.map((p, i) => [p.name, hidden[i]]))).toEqual({
      'getTask of a task in a channel one is not in': notFound('task'),
      'getTask of a task in no channel, by someone who shares a channel with its owner': notFound('task'),
      'readTaskCheckpoint of another’s task': notFound('task'),
      getChannel: notFound('channel'),
      readWal: notFound('channel'),
      adapterState: notFound('channel'),
      canSend: notFound('channel'),
      'findEnvelopeByCausation in a channel one is not in': notFound('channel'),
      'findEnvelopeByCausation of an envelope outside one’s audience': { ok: true, result: { envelope: null } },
      'listTasks filtered by a channel one is not in': empty,
      'listTasks filtered by an owner whose tasks one may not see': empty,
      'listChannels filtered by an agent one shares no channel with': {
        ok: true,
        result: { channels: [], next_cursor: null },
      },
    });
    const known = new Set([
      w.cid,
      w.question,
      w.channelTask,
      w.privateTask,
      ...[w.alice, w.bob, w.carol, w.mallory].map((a) => a.id),
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(ULID).filter((id) => !known.has(id)),
        async (id) => {
          const missing = await Promise.all(PROBES.map((p) => wireAnswer(net, p, w, id)));
          expect(missing).toEqual(hidden);
        },
      ),
      { numRuns: 20 },
    );
  });

  it('shows the same things to those who may see them (the reads above could have told)', async () => {
    await using net = await openNet(nats.url);
    const w = await world(net);
    const as = (agent: TestAgent) => ({ caller: agent.id });
    expect((await net.rpc.call('getTask', { task_id: w.channelTask }, as(w.bob))).task.owner_id).toBe(w.alice.id);
    expect((await net.rpc.call('getChannel', { channel_id: w.cid }, as(w.carol))).channel.channel_id).toBe(w.cid);
    const answer = await net.rpc.call(
      'findEnvelopeByCausation',
      { channel_id: w.cid, sender_id: w.bob.id, causation_id: w.question },
      as(w.alice),
    );
    expect(answer.envelope?.event_data).toEqual({ text: 'between us: plan b' });
    const byChannel = await net.rpc.call('listTasks', { channel_id: w.cid }, as(w.carol));
    expect(byChannel.tasks.map((t) => t.task_id)).toEqual([w.channelTask]);
    expect((await net.rpc.call('readTaskCheckpoint', { task_id: w.privateTask }, as(w.alice))).state).toBeNull();
    // A participant of the task's channel sees the task, so being refused its owner's checkpoint tells it nothing.
    expect(await failure(net.rpc.call('readTaskCheckpoint', { task_id: w.channelTask }, as(w.carol)))).toEqual({
      code: 'access_denied',
      message: `task '${w.channelTask}' belongs to '${w.alice.id}'`,
    });
  });

  it('still refuses a non-member’s acts on a channel, and an unknown caller before it looks anything up', async () => {
    await using net = await openNet(nats.url);
    const w = await world(net);
    const notMember = {
      code: 'access_denied',
      message: `'${w.mallory.id}' is not a participant of channel '${w.cid}'`,
    };
    expect(await failure(say(net, w.mallory, w.cid, 'let me in'))).toEqual({
      code: 'protocol_error',
      message: `discussion channel '${w.cid}' expects '${w.carol.id}' to speak, got '${w.mallory.id}'`,
    });
    expect(await failure(net.rpc.call('closeChannel', { channel_id: w.cid }, { caller: w.mallory.id }))).toEqual(
      notMember,
    );
    const ghost = newId();
    for (const channelId of [w.cid, newId()]) {
      expect(await failure(net.rpc.call('getChannel', { channel_id: channelId }, { caller: ghost }))).toEqual({
        code: 'access_denied',
        message: `unknown caller '${ghost}'`,
      });
    }
  });
});
