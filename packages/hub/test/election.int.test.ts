import { CONVERSATION_TYPE, createDefaultAdapterRegistry, type ChannelAdapter } from '@ag2net/adapters';
import { startHub, type Hub, type Logger } from '@ag2net/hub';
import { RpcReplySchema, hubNames, newId } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { openChannel, openNet, register, say, startColdHub } from './support.js';

const nats = natsPerFile();

/** A logger that keeps every message, so that a test can wait for what the hub reported. */
function recordingLogger(): Logger & { readonly messages: string[] } {
  const messages: string[] = [];
  const keep = (_: object, msg?: string): void => void messages.push(msg ?? '');
  const logger = { messages, debug: keep, info: keep, warn: keep, error: keep, child: () => logger };
  return logger;
}

function count(messages: readonly string[], message: string): number {
  return messages.filter((m) => m === message).length;
}

/** The lease key of `prefix`, read and written as another hub would. */
async function leaseKv(nc: NatsConnection, prefix: string) {
  return new Kvm(nc).open(hubNames(prefix).leasesBucket);
}

/** Frees the lease key of `prefix` the way a release does (a purge, so that the next create succeeds). */
async function purgeLease(nc: NatsConnection, prefix: string): Promise<void> {
  const names = hubNames(prefix);
  const jsm = await jetstreamManager(nc);
  await jsm.streams.purge(`KV_${names.leasesBucket}`, { filter: `$KV.${names.leasesBucket}.active` });
}

describe('elections', () => {
  it('a hydrate that fails is survived: the hub steps down, releases, and campaigns again until it can serve', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    await net.hub.close();
    // The new hub provisions while another holder keeps it standby; then the delivery consumer goes, without which
    // every hydrate fails (it reads the consumer's ack floor), and the lease comes free.
    const kv = await leaseKv(net.nc, net.prefix);
    await kv.create('active', 'intruder');
    const logger = recordingLogger();
    const failing = await startHub({ servers: nats.url, prefix: net.prefix, awaitActive: false, logger });
    const jsm = await jetstreamManager(net.nc);
    await jsm.consumers.delete(net.names.walStream, net.names.deliveryConsumer);
    await purgeLease(net.nc, net.prefix);

    await waitFor(() => count(logger.messages, 'term failed; stepping down') >= 2, {
      what: 'two failed terms',
      timeoutMs: 15_000,
    });
    expect(failing.role).toBe('standby');
    // Each failed term released the lease: another hub can take it (and, provisioning, brings the consumer back).
    const second = await startHub({ servers: nats.url, prefix: net.prefix, awaitActive: false });
    const serving = await Promise.race([
      failing.whenActive().then(() => failing),
      second.whenActive().then(() => second),
    ]);
    expect(serving.role).toBe('active');
    expect((await net.rpc.call('getAgent', { name_or_id: 'alice' })).passport).toEqual(alice.passport);
    await Promise.all([failing.close(), second.close()]);
    expect(await failing.closed()).toBeUndefined();
  });

  it('a lease taken away ends the term: waiters get unavailable, the other holder is left alone, the hub comes back', async () => {
    await using net = await openNet(nats.url, { leaseTtlMs: 1_500 });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const firstEpoch = net.hub.epoch;
    // A create waits for the invitee's ack, which never comes.
    const creating = net.nc.request(
      net.names.rpc('createChannel', alice.id),
      JSON.stringify({ type: 'conversation', participants: [bob.id] }),
      { timeout: 10_000 },
    );
    await bob.mailbox.waitFor((e) => e.event_type === 'ag2.channel.invite', 'the invite');

    // Another writer takes the lease (as if this hub had paused past its TTL).
    await purgeLease(net.nc, net.prefix);
    const kv = await leaseKv(net.nc, net.prefix);
    const intruderEpoch = await kv.create('active', 'intruder');

    const reply = RpcReplySchema.parse(JSON.parse((await creating).string()));
    expect(reply).toEqual({ ok: false, error: { code: 'unavailable', message: 'the hub stepped down; retry' } });
    expect(net.hub.role).toBe('standby');
    expect((await kv.get('active'))?.string()).toBe('intruder');

    await purgeLease(net.nc, net.prefix);
    await net.hub.whenActive();
    expect(net.hub.epoch).toBe(intruderEpoch + 1);
    expect(net.hub.epoch).toBeGreaterThan(firstEpoch);
    expect(await net.rpc.call('health', {})).toMatchObject({ role: 'active', epoch: intruderEpoch + 1 });
  });

  it('a hydrate that takes longer than the lease keeps the lease: the first term serves', async () => {
    // The conversation adapter, but its fold takes `foldMs` of CPU: a WAL that folds slower than the lease lasts.
    let foldMs = 0;
    const base = createDefaultAdapterRegistry().get(CONVERSATION_TYPE, 1);
    const slowFold = (...args: Parameters<ChannelAdapter['fold']>) => {
      const until = performance.now() + foldMs;
      while (performance.now() < until);
      return base.fold(...args);
    };
    const slow = new Proxy(base, {
      get(target, prop, receiver) {
        if (prop === 'fold') return slowFold;
        const value: unknown = Reflect.get(target, prop, receiver);
        return value;
      },
    });
    const adapters = createDefaultAdapterRegistry().register(slow);
    const logger = recordingLogger();
    await using net = await openNet(nats.url, { leaseTtlMs: 600, adapters, logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    for (let i = 0; i < 300; i += 1) await say(net, i % 2 === 0 ? alice : bob, cid, `turn ${i}`);
    await net.hub.close();

    foldMs = 4; // 303 envelopes: about 1.2 s of folding, twice the lease
    logger.messages.length = 0;
    const cold = await startColdHub(net);
    expect(cold.role).toBe('active');
    expect(count(logger.messages, 'lease lost; stepped down')).toBe(0);
    expect(count(logger.messages, 'lease acquired; hydrating')).toBe(1);
    expect(count(logger.messages, 'active')).toBe(1);
    foldMs = 0;
    expect((await say(net, bob, cid, 'after')).sequence).toBe(304);
    expect(count(logger.messages, 'active')).toBe(1);
  });

  it('an RPC subscription that ends makes the hub step down and campaign again', async () => {
    const prefix = uniqueName('hub');
    const nc = await connect({ servers: nats.url });
    const rpcSubs: Subscription[] = [];
    // The hub's connection, seen through a window that keeps the hub's RPC subscriptions.
    const watched = new Proxy(nc, {
      get(target, prop, receiver) {
        if (prop === 'subscribe') {
          return (subject: string, opts?: Parameters<NatsConnection['subscribe']>[1]) => {
            const sub = target.subscribe(subject, opts);
            if (subject.startsWith(`${prefix}.hub.`)) rpcSubs.push(sub);
            return sub;
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value.bind(target) as unknown) : value;
      },
    });
    const logger = recordingLogger();
    const hub: Hub = await startHub({ connection: watched, prefix, logger });
    const firstEpoch = hub.epoch;
    const firstSubs = rpcSubs.length;
    expect(firstSubs).toBeGreaterThan(0);

    rpcSubs[0]?.unsubscribe();
    await waitFor(() => count(logger.messages, 'active') === 2, { what: 'a second term', timeoutMs: 15_000 });
    expect(count(logger.messages, 'required loop ended')).toBe(1);
    expect(hub.role).toBe('active');
    expect(hub.epoch).toBeGreaterThan(firstEpoch);
    expect(rpcSubs.length).toBe(2 * firstSubs);

    // The connection closing under the hub ends it for good, and says so.
    await nc.close();
    expect(await hub.closed()).toEqual(new Error('the NATS connection closed'));
    expect(hub.role).toBe('standby');
  });
  it('a 3 s nats-server restart does not step a serving hub down', async () => {
    // Restarts the file's server: this test runs last. At the default lease (6 s): failed renewals during the outage
    // are no loss, and a lapse (80 % of 6 s after the last renewal began) is renewed once the server answers.
    const logger = recordingLogger();
    await using net = await openNet(nats.url, { leaseTtlMs: 6_000, logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const epoch = net.hub.epoch;

    await nats.restart(3_000);
    // Clients resend the same post until NATS and JetStream are back; its id makes it one post.
    const id = newId();
    const after = await waitFor(
      () => say(net, alice, cid, 'after the restart', { envelope_id: id }).catch(() => undefined),
      { what: 'a post after the restart', timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(after).toMatchObject({ envelope_id: id, sequence: 4 });
    expect(net.hub.role).toBe('active');
    expect(net.hub.epoch).toBe(epoch);
    expect(count(logger.messages, 'lease lost; stepped down')).toBe(0);
    expect(count(logger.messages, 'active')).toBe(1);
  });
});
