/**
 * Hostile rules: an agent's own rule can neither stall the hub with a pattern nor lift the operator's limits, and
 * an agent cannot write its own track record.
 */
import { natsPerFile } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/index.js';
import { T0, failure, openChannel, openNet, rawFailure, register, say, startColdHub, type TestNet } from './support.js';

/** A request the client's own validation would stop, sent as is. */
function raw(net: TestNet, op: string, body: unknown, callerId?: string): Promise<{ code: string; message: string }> {
  return rawFailure(net, net.names.rpc(op, callerId), JSON.stringify(body));
}

const nats = natsPerFile();

describe('patterns are data', () => {
  it('refuses a malformed glob at setRule and at register, and keeps the old rule', async () => {
    await using net = await openNet(nats.url);
    const bob = await register(net, 'bob');
    expect(await raw(net, 'setRule', { rule: { access: { inbound_from: ['[b-a]'] } } }, bob.id)).toEqual({
      code: 'invalid_request',
      message: "invalid setRule request: rule.access.inbound_from.0: invalid glob: reversed range 'b-a' in a set",
    });
    expect((await net.rpc.call('getRule', { agent_id: bob.id })).rule.access.inbound_from).toEqual(['*']);
    const registering = raw(net, 'register', {
      passport: { name: 'eve' },
      rule: { access: { outbound_to: ['bot-['] } },
    });
    expect(await registering).toEqual({
      code: 'invalid_request',
      message:
        "invalid register request: rule.access.outbound_to.0: invalid glob: unclosed '[' at position 4 (write '[[]' for a literal '[')",
    });
  });

  it('matches a many-star outbound_to against the longest name by its result, without backtracking', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { access: { outbound_to: ['*a*a*a*a*a*b'] } } });
    const longA = await register(net, 'a'.repeat(128));
    const longB = await register(net, `${'a'.repeat(127)}b`);
    expect(await failure(openChannel(net, alice, 'conversation', [longA]))).toEqual({
      code: 'access_denied',
      message: `sender 'alice' not permitted to send to '${'a'.repeat(128)}'`,
    });
    const cid = (await openChannel(net, alice, 'conversation', [longB])).channel_id;
    expect((await say(net, alice, cid, 'hi', { audience: [longB.id] })).sequence).toBe(4);
  });
});

describe('limits are the operator’s', () => {
  const limits = { postsPerMinute: 120, postBurst: 3, maxConcurrentChannels: 2, maxPending: 50, delegationDepth: 4 };

  it('setRule({}) cannot lift a limit: every no-cap and every higher wish becomes the ceiling', async () => {
    await using net = await openNet(nats.url, { limits });
    const alice = await register(net, 'alice', { rule: { limits: { rate: { per_minute: 60, burst: 2 } } } });
    const bob = await register(net, 'bob');
    const { rule } = await net.rpc.call('setRule', { rule: {} }, { caller: alice.id });
    expect(rule.limits).toEqual({
      max_concurrent_channels: 2,
      max_concurrent_tasks: 100,
      channel_ttl_default: '2h',
      task_ttl_default: '15m',
      rate: { per_minute: 120, burst: 3 },
      delegation_depth: 4,
      inbox: { max_pending: 50, overflow: 'reject', high_water: null },
    });
    const asked = { max_concurrent_channels: 1_000, rate: { per_minute: 10_000, burst: 500 }, delegation_depth: 99 };
    const higher = (await net.rpc.call('setRule', { rule: { limits: asked } }, { caller: alice.id })).rule.limits;
    expect([higher.max_concurrent_channels, higher.rate, higher.delegation_depth]).toEqual([
      2,
      { per_minute: 120, burst: 3 },
      4,
    ]);
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await openChannel(net, alice, 'conversation', [bob]);
    expect(await failure(openChannel(net, alice, 'conversation', [bob]))).toEqual({
      code: 'access_denied',
      message: `creator '${alice.id}' exceeded max_concurrent_channels (2 >= 2)`,
    });
    for (const n of [1, 2, 3]) await say(net, alice, cid, `m${n}`);
    expect(await failure(say(net, alice, cid, 'm4'))).toEqual({
      code: 'access_denied',
      message: "sender 'alice' exceeded rate limit (120/min, burst 3)",
    });
    // A stricter wish is kept as asked.
    const stricter = await net.rpc.call(
      'setRule',
      { rule: { limits: { rate: { per_minute: 6, burst: 1 } } } },
      { caller: bob.id },
    );
    expect(stricter.rule.limits.rate).toEqual({ per_minute: 6, burst: 1 });
  });

  it('streams and buckets are provisioned with the operator’s quotas', async () => {
    const quotas = { maxMessageBytes: 300_000, inboxMaxMessages: 77, streamMaxBytes: 64 * 1024 * 1024 };
    await using net = await openNet(nats.url, { limits: quotas });
    const jsm = await jetstreamManager(net.nc);
    const inbox = (await jsm.streams.info(net.names.inboxStream)).config;
    expect([inbox.max_msg_size, inbox.max_bytes, inbox.max_msgs_per_subject, inbox.discard]).toEqual([
      300_000,
      64 * 1024 * 1024,
      77,
      'new',
    ]);
    expect(inbox.discard_new_per_subject).toBe(true);
    const wal = (await jsm.streams.info(net.names.walStream)).config;
    expect([wal.max_msg_size, wal.max_bytes]).toEqual([300_000, 64 * 1024 * 1024]);
    const audit = (await jsm.streams.info(net.names.auditStream)).config;
    expect([audit.max_msg_size, audit.max_bytes]).toEqual([300_000, 64 * 1024 * 1024]);
    const agents = await (await new Kvm(net.nc).open(net.names.agentsBucket)).status();
    expect(agents.maxValueSize).toBe(300_000);
  });
});

describe('the observed track record is the hub’s', () => {
  it('setResume and register keep observed as the hub counted it', async () => {
    await using net = await openNet(nats.url);
    const forged = { writing: { n: 100, completed: 100, failed: 0, expired: 0, p50_latency_ms: 1 } };
    const alice = await register(net, 'alice', { resume: { summary: 'writer', observed: forged } });
    expect((await net.rpc.call('getResume', { agent_id: alice.id })).resume.observed).toEqual({});
    const { resume } = await net.rpc.call(
      'setResume',
      { resume: { summary: 'best writer', observed: forged } },
      { caller: alice.id },
    );
    expect([resume.summary, resume.observed, resume.version]).toEqual(['best writer', {}, 2]);
  });

  it('recordObservation needs an ended task the caller owns, with the outcome it ended with', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const mallory = await register(net, 'mallory');
    const observe = (task_id: string, state: 'running' | 'completed') =>
      net.rpc.call(
        'observeTask',
        { task: { created_at: T0, task_id, state, owner_id: alice.id } },
        { caller: alice.id },
      );
    await observe('t-run', 'running');
    await observe('t-done', 'running');
    await net.rpc.call('updateTask', { task_id: 't-done', state: 'completed' }, { caller: alice.id });
    const claim = { capability: 'writing', outcome: 'completed' } as const;
    expect(await raw(net, 'recordObservation', claim, mallory.id)).toEqual({
      code: 'invalid_request',
      message: 'recordObservation needs the task_id of an ended task the caller owns',
    });
    expect(
      await failure(net.rpc.call('recordObservation', { ...claim, task_id: 'nope' }, { caller: mallory.id })),
    ).toEqual({
      code: 'not_found',
      message: 'task not found: nope',
    });
    expect(
      await failure(net.rpc.call('recordObservation', { ...claim, task_id: 't-done' }, { caller: mallory.id })),
    ).toEqual({
      code: 'access_denied',
      message: "only the owner may record an observation of task 't-done'",
    });
    expect(
      await failure(net.rpc.call('recordObservation', { ...claim, task_id: 't-run' }, { caller: alice.id })),
    ).toEqual({
      code: 'protocol_error',
      message: "task 't-run' has not ended (state=running)",
    });
    const failed = { ...claim, outcome: 'failed', task_id: 't-done' } as const;
    expect(await failure(net.rpc.call('recordObservation', failed, { caller: alice.id }))).toEqual({
      code: 'invalid_request',
      message: "task 't-done' ended completed, not failed",
    });
    const counted = await net.rpc.call('recordObservation', { ...claim, task_id: 't-done' }, { caller: alice.id });
    expect(counted.resume.observed).toEqual({
      writing: { n: 1, completed: 1, failed: 0, expired: 0, p50_latency_ms: 0 },
    });
    expect((await net.rpc.call('getResume', { agent_id: mallory.id })).resume.observed).toEqual({});
  });
});

describe('rules stored before the ceilings', () => {
  it('are held under the ceilings when a hub loads them', async () => {
    await using net = await openNet(nats.url);
    const carol = await register(net, 'carol');
    const dave = await register(net, 'dave');
    const cid = (await openChannel(net, carol, 'conversation', [dave])).channel_id;
    await net.hub.close();
    // What an older hub stored: no cap of carol's own on delegation depth or rate.
    const agents = await new Kvm(net.nc).open(net.names.agentsBucket);
    const stored = { version: 2, limits: { delegation_depth: 0, rate: { per_minute: 0, burst: 0 } } };
    await agents.put(`${carol.id}.rule`, JSON.stringify(stored));
    await startColdHub(net);
    const { rule } = await net.rpc.call('getRule', { agent_id: carol.id });
    expect([rule.limits.delegation_depth, rule.limits.rate]).toEqual([16, { per_minute: 6_000, burst: 1_000 }]);
    expect(await failure(say(net, carol, cid, 'deep', { depth: 17 }))).toEqual({
      code: 'access_denied',
      message: "sender 'carol' exceeded delegation_depth (17 > 16)",
    });
  });

  it('report each malformed glob once when a hub loads them, and that pattern matches nobody', async () => {
    const warnings: object[] = [];
    const noop = (): void => undefined;
    const logger: Logger = {
      debug: noop,
      info: noop,
      error: noop,
      warn: (obj, msg) => void warnings.push({ ...obj, msg }),
      child: () => logger,
    };
    await using net = await openNet(nats.url, { logger });
    const carol = await register(net, 'carol');
    const dave = await register(net, 'dave');
    await net.hub.close();
    // What a hub stored before rules were validated: a reversed range among carol's inbound patterns.
    const agents = await new Kvm(net.nc).open(net.names.agentsBucket);
    await agents.put(`${carol.id}.rule`, JSON.stringify({ version: 2, access: { inbound_from: ['[z-a]', 'e*'] } }));
    await startColdHub(net);
    expect(warnings.filter((w) => 'pattern' in w)).toEqual([
      {
        agentId: carol.id,
        pattern: '[z-a]',
        problem: "reversed range 'z-a' in a set",
        msg: 'a stored rule holds a malformed glob; it matches nothing',
      },
    ]);
    expect(await failure(openChannel(net, dave, 'conversation', [carol]))).toEqual({
      code: 'access_denied',
      message: "invitee 'carol' does not accept inbound from 'dave'",
    });
  });
});
