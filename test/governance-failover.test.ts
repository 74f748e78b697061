import { HubRpc } from '@ag2net/client';
import {
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE,
  EV_EXPECTATION_VIOLATED,
  EV_TEXT,
  EnvelopeSchema,
  hubNames,
  type Envelope,
  OPERATOR_CALLER,
} from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { ackInviteAs } from './support/invites.js';
import { startService, type ServiceProcess } from './support/processes.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const TTL_MS = 900_000;

const stack = fileStack();

/** A hub process with a manual clock (see support/clocked-hub.ts). */
function startClockedHub(prefix: string, hubId: string): ServiceProcess {
  const hub = startService(`clocked-${hubId}`, 'test/support/clocked-hub.ts', [
    stack.url,
    prefix,
    hubId,
    String(T0),
    '1500',
  ]);
  stack.track(hub);
  return hub;
}

/** Sets a hub process's clock to T0 + `ms` and, if `tick`, runs its sweepers once. */
async function clockAt(prefix: string, hubId: string, ms: number, tick: boolean): Promise<string> {
  const reply = await stack.nc.request(`${prefix}.test.${hubId}.clock`, JSON.stringify({ set_ms: T0 + ms, tick }), {
    timeout: 10_000,
  });
  const answer: unknown = JSON.parse(reply.string());
  if (typeof answer !== 'object' || answer === null || !('role' in answer) || typeof answer.role !== 'string') {
    throw new Error(`clock control of ${hubId} failed: ${reply.string()}`);
  }
  return answer.role;
}

async function nextInboxEnvelope(prefix: string, agentId: string): Promise<Envelope> {
  const names = hubNames(prefix);
  const consumer = await jetstream(stack.nc).consumers.get(names.inboxStream, names.inboxConsumer(agentId));
  const msg = await consumer.next({ expires: 10_000 });
  if (msg === null) throw new Error(`no delivery for ${agentId}`);
  msg.ack();
  return EnvelopeSchema.parse(msg.json());
}

describe('governance across a hub failover', () => {
  it('the standby expires a channel exactly at its TTL after the active hub is killed just before, and re-fires no violation', async () => {
    const prefix = uniqueName('gfo');
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 60_000 });
    const first = startClockedHub(prefix, 'first');
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 30_000,
      what: 'the first hub to serve',
    });
    const second = startClockedHub(prefix, 'second');
    await waitFor(() => second.output().includes('second started as standby'), {
      timeoutMs: 30_000,
      what: 'the standby',
    });
    // Both processes follow the same clock; only the active one sweeps.
    const stepTo = async (ms: number, active: string): Promise<void> => {
      for (const hub of ['first', 'second']) {
        if (hub === 'first' && first.child.exitCode === null && first.child.signalCode === null) {
          await clockAt(prefix, hub, ms, hub === active);
        } else if (hub === 'second') await clockAt(prefix, hub, ms, hub === active);
      }
    };

    const id = async (name: string) => (await rpc.call('register', { passport: { name } })).passport.agent_id ?? '';
    const [alice, bob, carol] = [await id('alice'), await id('bob'), await id('carol')];
    const creating = rpc.call(
      'createChannel',
      { type: 'discussion', participants: [bob, carol], ttl: '15m' },
      { caller: alice },
    );
    for (const invitee of [bob, carol]) {
      const invite = await nextInboxEnvelope(prefix, invitee);
      expect(invite.event_type).toBe(EV_CHANNEL_INVITE);
      await ackInviteAs(rpc, invite, invitee);
    }
    const cid = (await creating).channel.channel_id;

    // On the first hub: alice is warned at 120 s and hidden at 600 s; bob, expected from then, is warned at 720 s.
    await stepTo(120_000, 'first');
    await stepTo(600_000, 'first');
    await stepTo(720_000, 'first');
    await stepTo(TTL_MS - 1, 'first');
    const fired = async () =>
      (await rpc.call('readWal', { channel_id: cid }, { caller: alice })).envelopes.filter(
        (e) => e.event_type === EV_EXPECTATION_VIOLATED,
      );
    const before = (await fired()).map((e) => [e.event_data['on_violation'], e.event_data['violators']]);
    expect(before).toEqual([
      ['warn', [alice]],
      ['hide', [alice]],
      ['warn', [bob]],
    ]);

    // Kill the active hub 1 ms before the TTL is due; the standby takes the lease and hydrates.
    await first.stop('SIGKILL');
    expect(await first.exited).toBeNull();
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'second', {
      timeoutMs: 30_000,
      what: 'the standby to take over',
    });

    // Same instant as the last sweep of the first hub: nothing is due that has not fired already.
    expect(await clockAt(prefix, 'second', TTL_MS - 1, true)).toBe('active');
    expect((await rpc.call('getChannel', { channel_id: cid }, { caller: alice })).channel.state).toBe('active');
    expect(await fired()).toHaveLength(3);

    // At the TTL, to the millisecond, the channel expires.
    await clockAt(prefix, 'second', TTL_MS, true);
    const ended = await waitFor(
      async () => {
        const { channel } = await rpc.call('getChannel', { channel_id: cid }, { caller: alice });
        return channel.state === 'expired' ? channel : undefined;
      },
      { timeoutMs: 10_000, what: 'the channel to expire' },
    );
    expect(ended).toMatchObject({ close_reason: 'ttl_expired', closed_at: '2026-01-01T00:15:00.000Z' });
    await clockAt(prefix, 'second', TTL_MS + 600_000, true);

    const log = (await rpc.call('readWal', { channel_id: cid }, { caller: alice })).envelopes;
    expect(log.filter((e) => e.event_type === EV_EXPECTATION_VIOLATED)).toHaveLength(3);
    expect(log.filter((e) => e.event_type === EV_CHANNEL_EXPIRED)).toHaveLength(1);
    expect(log.at(-1)?.event_type).toBe(EV_CHANNEL_EXPIRED);
    expect(log.some((e) => e.event_type === EV_TEXT)).toBe(false);

    const names = hubNames(prefix);
    const jsm = await jetstreamManager(stack.nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(names.walStream, names.deliveryConsumer);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 30_000, what: 'the standby to fan out and audit everything admitted' },
    );
    const { records } = await rpc.call('readAudit', { channel_id: cid }, { caller: OPERATOR_CALLER });
    expect(records.map((r) => [r.kind, r['on_violation'] ?? r['reason'] ?? null, r['violators'] ?? null])).toEqual([
      ['channel_created', null, null],
      ['expectation_violated', 'warn', [alice]],
      ['expectation_violated', 'hide', [alice]],
      ['expectation_violated', 'warn', [bob]],
      ['channel_expired', 'ttl_expired', null],
    ]);
    expect(records.at(-1)?.at).toBe('2026-01-01T00:15:00.000Z');
  }, 120_000);
});
