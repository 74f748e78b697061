import { HubRpc } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { EV_CHANNEL_INVITE, EV_TEXT, EnvelopeSchema, hubNames, type Envelope } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { writeSyntheticHistory } from '../bench/src/load/synthetic-history.js';
import { fileStack } from './support/file-stack.js';
import { ackInviteAs } from './support/invites.js';
import { startHubService, type ServiceProcess } from './support/processes.js';

const OPEN = 20;
const CLOSED = 1_980;
const PER_CHANNEL = 100;
/** A lease far shorter than the first hydrate (which folds 20 channels of 100 envelopes out of a 200,000-entry WAL). */
const LEASE_TTL_MS = 1_500;

const stack = fileStack();

/** The fields of the service's last `hydrated` log line. */
function hydrated(service: ServiceProcess): Record<string, unknown> | undefined {
  const lines = service
    .output()
    .split('\n')
    .filter((l) => l.includes('"msg":"hydrated"'))
    .map((l): unknown => JSON.parse(l));
  const last = lines.at(-1);
  return typeof last === 'object' && last !== null ? { ...last } : undefined;
}

describe('a large log', () => {
  it('a cold hub over 200,000 envelopes becomes and stays active; after a kill the standby takes over from snapshots and serves', async () => {
    const prefix = uniqueName('big');
    const names = hubNames(prefix);
    const jsm = await jetstreamManager(stack.nc);
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 60_000 });
    // The streams and buckets as a hub provisions them; then the history, written straight into them.
    await (await startHub({ servers: stack.url, prefix })).close();
    const history = await writeSyntheticHistory(
      { nc: stack.nc, jsm, names },
      {
        openChannels: OPEN,
        closedChannels: CLOSED,
        envelopesPerChannel: PER_CHANNEL,
      },
    );
    expect(history.walMessages).toBe(200_000);
    const lease = await new Kvm(stack.nc).open(names.leasesBucket);
    const snapshots = await new Kvm(stack.nc).open(names.snapshotsBucket);

    /** Waits until `hubId` serves, then until it renewed its lease four more times, still holding the same term. */
    const servesAndStays = async (hubId: string): Promise<void> => {
      await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === hubId, {
        timeoutMs: 60_000,
        what: `${hubId} to serve`,
      });
      const { epoch } = await rpc.call('health', {});
      const start = (await lease.get('active'))?.revision ?? 0;
      await waitFor(async () => ((await lease.get('active'))?.revision ?? 0) >= start + 4, {
        timeoutMs: 30_000,
        what: `${hubId} to renew its lease four times`,
      });
      expect(await rpc.call('health', {})).toMatchObject({ hub_id: hubId, role: 'active', epoch });
      expect((await lease.get('active'))?.string()).toBe(hubId);
    };

    const first = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'first', leaseTtlMs: LEASE_TTL_MS }),
    );
    await servesAndStays('first');
    // No snapshots yet: each open channel's whole log was folded, read by its own subject; ended ones not at all.
    expect(hydrated(first)).toMatchObject({ channels: 2_000, open: OPEN, restored: 0, envelopes: OPEN * PER_CHANNEL });
    expect(first.output()).not.toContain('lease lost');
    // Having folded them, the hub writes the open channels' snapshots.
    await waitFor(async () => (await snapshots.status()).values >= OPEN, {
      timeoutMs: 30_000,
      what: 'the snapshots of the open channels',
    });

    const second = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'second', leaseTtlMs: LEASE_TTL_MS }),
    );
    await waitFor(() => second.output().includes('started; competing for the lease'), {
      timeoutMs: 20_000,
      what: 'the standby',
    });
    await first.stop('SIGKILL');
    await servesAndStays('second');
    // Every open channel comes from its snapshot; the tail folded after the snapshots is at most one envelope per
    // channel (a run under coverage folded one per channel where a quiet run folded none; not yet explained).
    const restored = hydrated(second);
    expect(restored).toMatchObject({ channels: 2_000, open: OPEN, restored: OPEN });
    expect(Number(restored?.['envelopes'])).toBeLessThanOrEqual(OPEN);
    expect(second.output()).not.toContain('lease lost');

    // It serves: a new channel opens and takes posts.
    const a = (await rpc.call('register', { passport: { name: 'a' } })).passport.agent_id ?? '';
    const b = (await rpc.call('register', { passport: { name: 'b' } })).passport.agent_id ?? '';
    const js = jetstream(stack.nc);
    const creating = rpc.call('createChannel', { type: 'conversation', participants: [b] }, { caller: a });
    const consumer = await js.consumers.get(names.inboxStream, names.inboxConsumer(b));
    const msg = await consumer.next({ expires: 10_000 });
    const invite: Envelope = EnvelopeSchema.parse(msg?.json());
    msg?.ack();
    expect(invite.event_type).toBe(EV_CHANNEL_INVITE);
    await ackInviteAs(rpc, invite, b);
    const cid = (await creating).channel.channel_id;
    const post = (sender: string, text: string) =>
      rpc.call(
        'post',
        { channel_id: cid, sender_id: sender, event_type: EV_TEXT, event_data: { text } },
        { caller: sender },
      );
    expect((await post(a, 'hello')).sequence).toBe(4);
    expect((await post(b, 'hi')).sequence).toBe(5);
    expect((await rpc.call('health', {})).hub_id).toBe('second');
  }, 120_000);
});
