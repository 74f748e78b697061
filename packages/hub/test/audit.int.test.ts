import { EV_CHANNEL_EXPIRED, type HubResponse } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  T0,
  at,
  audit,
  drained,
  getChannel,
  openChannel,
  openNet,
  readWal,
  register,
  tickAfter,
  types,
  waitForState,
} from './support.js';

const nats = natsPerFile();

/** Records without their ids, for one exact comparison. */
function withoutIds(records: HubResponse<'readAudit'>['records']) {
  return records.map(({ id: _id, ...rest }) => rest);
}

describe('audit trail', () => {
  it('records registration, resume, skill and rule changes and unregistration with AG2’s fields', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    // A retried register publishes its record again; the stream keeps one.
    await net.rpc.call('register', { passport: alice.passport });
    net.clock.advance(1_000);
    await net.rpc.call('setResume', { resume: { summary: 'Statistician' } }, { caller: alice.id });
    await net.rpc.call('setSkill', { skill_md: '# Alice' }, { caller: alice.id });
    await net.rpc.call('setSkill', { skill_md: null }, { caller: alice.id });
    await net.rpc.call('setRule', { rule: { limits: { delegation_depth: 2 } } }, { caller: alice.id });
    await net.rpc.call('unregister', {}, { caller: alice.id });
    expect(withoutIds(await audit(net))).toEqual([
      { kind: 'agent_registered', at: T0, agent_id: alice.id, name: 'alice' },
      { kind: 'resume_set', at: at(1_000), source: 'tenant', agent_id: alice.id, version: 2 },
      { kind: 'skill_set', at: at(1_000), agent_id: alice.id, removed: false },
      { kind: 'skill_set', at: at(1_000), agent_id: alice.id, removed: true },
      { kind: 'rule_set', at: at(1_000), agent_id: alice.id, version: 2 },
      { kind: 'agent_unregistered', at: at(1_000), agent_id: alice.id, name: 'alice' },
    ]);
  });

  it('records a channel’s creation and its close with the reason', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    net.clock.advance(2_000);
    await net.rpc.call('closeChannel', { channel_id: cid, reason: 'explicit' }, { caller: alice.id });
    await drained(net);
    expect(withoutIds(await audit(net, { channel_id: cid }))).toEqual([
      {
        kind: 'channel_created',
        at: T0,
        channel_id: cid,
        manifest_type: 'conversation',
        manifest_version: 1,
        creator_id: alice.id,
        participants: [alice.id, bob.id],
      },
      { kind: 'channel_closed', at: at(2_000), channel_id: cid, reason: 'explicit' },
    ]);
  });

  it('expires a channel exactly when its TTL is due and records channel_expired once', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob], { ttl: '60s' })).channel_id;
    await tickAfter(net, 59_999);
    expect((await getChannel(net, cid)).state).toBe('active');
    await tickAfter(net, 1);
    expect(await waitForState(net, cid, 'expired')).toMatchObject({
      close_reason: 'ttl_expired',
      closed_at: at(60_000),
    });
    await tickAfter(net, 60_000);
    expect(types(await readWal(net, alice, cid)).filter((t) => t === EV_CHANNEL_EXPIRED)).toHaveLength(1);
    await drained(net);
    expect(withoutIds(await audit(net, { kinds: ['channel_expired'] }))).toEqual([
      { kind: 'channel_expired', at: at(60_000), channel_id: cid, reason: 'ttl_expired' },
    ]);
  });

  it('filters by kinds, channel, agent in any role and time range, and applies the limit', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    net.clock.advance(1_000);
    const bob = await register(net, 'bob');
    net.clock.advance(1_000);
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    net.clock.advance(1_000);
    await net.rpc.call('setRule', { rule: {} }, { caller: bob.id });
    await drained(net);
    const kinds = async (filter: Parameters<typeof audit>[1]) => (await audit(net, filter)).map((r) => r.kind);
    expect(await kinds({})).toEqual(['agent_registered', 'agent_registered', 'channel_created', 'rule_set']);
    expect(await kinds({ kinds: ['rule_set', 'channel_created'] })).toEqual(['channel_created', 'rule_set']);
    expect(await kinds({ channel_id: cid })).toEqual(['channel_created']);
    expect(await kinds({ agent_id: bob.id })).toEqual(['agent_registered', 'channel_created', 'rule_set']);
    expect(await kinds({ since: at(1_000), until: at(3_000) })).toEqual(['agent_registered', 'channel_created']);
    expect(await kinds({ limit: 1 })).toEqual(['agent_registered']);
    expect(await kinds({ kinds: ['turn_failed'] })).toEqual([]);
  });

  it('returns a record stored twice under the same id once', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const [record] = await audit(net);
    // Beyond the stream's duplicate window a repeat would be stored again; the reader still returns it once.
    await net.js.publish(net.names.audit('agent_registered'), JSON.stringify(record));
    expect((await audit(net)).map((r) => [r.kind, r['agent_id']])).toEqual([['agent_registered', alice.id]]);
  });
});
