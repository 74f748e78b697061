import { HubRpc } from '@ag2net/client';
import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { natsPerFile } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { failure, openChannel, openNet, register, startColdHub, type TestAgent, type TestNet } from './support.js';

const nats = natsPerFile();

/** One replica of an agent, as the client's `TurnLocks` is: the agent calls, the replica is the holder. */
function replica(rpc: HubRpc, agent: TestAgent, holder: string) {
  const options = { caller: agent.id };
  return {
    acquire: async (channelId: string, ttlMs = 1000) =>
      (await rpc.call('acquireTurnLock', { channel_id: channelId, holder, ttl_ms: ttlMs }, options)).acquired,
    renew: async (channelId: string) =>
      (await rpc.call('renewTurnLock', { channel_id: channelId, holder }, options)).renewed,
    release: async (channelId: string) => {
      await rpc.call('releaseTurnLock', { channel_id: channelId, holder }, options);
    },
  };
}

/** Alice opened a conversation with bob; bob's turns are what the replicas lock. */
async function conversation(net: TestNet): Promise<{ bob: TestAgent; carol: TestAgent; channelId: string }> {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const carol = await register(net, 'carol');
  const channel = await openChannel(net, alice, CONVERSATION_TYPE, [bob]);
  return { bob, carol, channelId: channel.channel_id };
}

/** The stored lock of `agentId` in `channelId`, as the hub wrote it. */
async function storedLock(net: TestNet, agentId: string, channelId: string): Promise<unknown> {
  const kv = await new Kvm(net.nc).open(net.names.turnLocksBucket);
  const entry = await kv.get(`${agentId}.${channelId}`);
  return entry === null ? null : { operation: entry.operation, value: entry.operation === 'PUT' ? entry.json() : null };
}

describe('turn locks', () => {
  it('two replicas of one agent compete: exactly one holds the lock; the other can neither renew nor release it', async () => {
    await using net = await openNet(nats.url);
    const { bob, channelId } = await conversation(net);
    const a = replica(net.rpc, bob, 'replica-a');
    const b = replica(net.rpc, bob, 'replica-b');

    for (let round = 0; round < 10; round += 1) {
      const [gotA, gotB] = await Promise.all([a.acquire(channelId), b.acquire(channelId)]);
      expect([gotA, gotB].sort()).toEqual([false, true]);
      const [winner, loser, winnerId] = gotA ? [a, b, 'replica-a'] : [b, a, 'replica-b'];
      expect(await storedLock(net, bob.id, channelId)).toEqual({
        operation: 'PUT',
        value: { holder: winnerId, ttl_ms: 1000, expires_at: net.clock.now() + 1000 },
      });
      expect(await loser.renew(channelId)).toBe(false);
      await loser.release(channelId);
      expect([await loser.acquire(channelId), await winner.renew(channelId), await winner.acquire(channelId)]).toEqual([
        false,
        true,
        true,
      ]);
      await winner.release(channelId);
      expect(await storedLock(net, bob.id, channelId)).toEqual({ operation: 'DEL', value: null });
    }
  });

  it('a holder that stops renewing loses the lock one TTL after its last renewal, by the hub clock', async () => {
    await using net = await openNet(nats.url);
    const { bob, channelId } = await conversation(net);
    const a = replica(net.rpc, bob, 'replica-a');
    const b = replica(net.rpc, bob, 'replica-b');

    expect(await a.acquire(channelId, 3000)).toBe(true);
    net.clock.advance(2000);
    expect(await a.renew(channelId)).toBe(true); // alive until 5000
    net.clock.advance(2999);
    expect(await b.acquire(channelId)).toBe(false);
    net.clock.advance(1); // a stopped renewing: its lock lapsed
    expect(await b.acquire(channelId)).toBe(true);
    expect([await a.renew(channelId), await a.acquire(channelId)]).toEqual([false, false]);
    await a.release(channelId); // not a's any more: b keeps it
    expect(await b.renew(channelId)).toBe(true);

    net.clock.advance(1000); // b lapsed too; nobody took it, and a renewal does not bring it back
    expect(await b.renew(channelId)).toBe(false);
    expect(await a.acquire(channelId)).toBe(true);
  });

  it('a hub failover keeps the lock: the new hub honours it, and a renewal sent while no hub serves waits for it', async () => {
    await using net = await openNet(nats.url);
    const { bob, channelId } = await conversation(net);
    const a = replica(net.rpc, bob, 'replica-a');
    const b = replica(net.rpc, bob, 'replica-b');
    expect(await a.acquire(channelId, 5000)).toBe(true);

    await net.hub.close();
    // A replica's renewal during the failover: nobody answers, the call retries until the new hub serves.
    const patient = replica(new HubRpc(net.nc, { prefix: net.prefix, retryForMs: 30_000 }), bob, 'replica-a');
    const renewal = patient.renew(channelId);
    await startColdHub(net);

    expect(await renewal).toBe(true);
    expect(await b.acquire(channelId)).toBe(false);
    net.clock.advance(4999);
    expect([await b.acquire(channelId), await a.renew(channelId)]).toEqual([false, true]);
  });

  it('refuses a caller that is not in the channel, and an unknown channel', async () => {
    await using net = await openNet(nats.url);
    const { carol, channelId } = await conversation(net);
    const intruder = replica(net.rpc, carol, 'replica-c');

    expect((await failure(intruder.acquire(channelId))).code).toBe('access_denied');
    expect((await failure(intruder.renew(channelId))).code).toBe('access_denied');
    expect((await failure(intruder.release(channelId))).code).toBe('access_denied');
    expect((await failure(intruder.acquire('no-such-channel'))).code).toBe('not_found');
  });

  it('a stored value the hub did not write is quarantined and the lock treated as free', async () => {
    await using net = await openNet(nats.url);
    const { bob, channelId } = await conversation(net);
    const kv = await new Kvm(net.nc).open(net.names.turnLocksBucket);
    await kv.put(`${bob.id}.${channelId}`, 'someone else');

    expect(await replica(net.rpc, bob, 'replica-a').acquire(channelId)).toBe(true);
    expect(net.hub.health().quarantined).toBe(1);
    expect(await storedLock(net, bob.id, channelId)).toEqual({
      operation: 'PUT',
      value: { holder: 'replica-a', ttl_ms: 1000, expires_at: net.clock.now() + 1000 },
    });
  });
});
