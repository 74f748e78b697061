import { HubClient, ackInvite, isInviteFor, type Logger } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { DELIVERY_ORIGIN_HUB, DeliveryHeader } from '@ag2net/protocol/internal';
import { EV_CHANNEL_INVITE, EV_TEXT, hubNames, newId, type Envelope } from '@ag2net/protocol';
import { startNatsServer, uniqueName, waitFor, type NatsServer } from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

let nats: NatsServer;
let raw: NatsConnection;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  raw = await connect({ servers: nats.url });
});

afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

afterAll(async () => {
  await raw.close();
  await nats.stop();
});

/** A logger that keeps its warnings. */
function recordingLogger(): Logger & { readonly warnings: { obj: object; msg: string | undefined }[] } {
  const warnings: { obj: object; msg: string | undefined }[] = [];
  const noop = (): void => undefined;
  const make = (bindings: object): Logger => ({
    debug: noop,
    info: noop,
    error: noop,
    warn: (obj, msg) => void warnings.push({ obj: { ...bindings, ...obj }, msg }),
    child: (more) => make({ ...bindings, ...more }),
  });
  return { ...make({}), warnings };
}

async function net(logger: Logger): Promise<{ client: HubClient; prefix: string }> {
  const prefix = uniqueName('forge');
  const hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
  const client = await HubClient.connect({ servers: nats.url, prefix, logger });
  open.push(hub, client);
  return { client, prefix };
}

/** An envelope as the hub would deliver it, published straight onto `agentId`'s inbox subject by someone else. */
async function forge(prefix: string, agentId: string, envelope: Partial<Envelope>): Promise<void> {
  const full = {
    envelope_id: newId(),
    channel_id: newId(),
    sender_id: newId(),
    event_type: EV_TEXT,
    event_data: { text: 'forged' },
    audience: null,
    causation_id: null,
    depth: 0,
    sequence: 1,
    created_at: new Date().toISOString(),
    ...envelope,
  };
  await jetstream(raw).publish(hubNames(prefix).inbox(agentId), JSON.stringify(full));
}

/** Undelivered and unacked messages of an identity's inbox consumer. */
async function backlog(prefix: string, agentId: string): Promise<{ pending: number; ackPending: number }> {
  const names = hubNames(prefix);
  const info = await (await jetstreamManager(raw)).consumers.info(names.inboxStream, names.inboxConsumer(agentId));
  return { pending: info.num_pending, ackPending: info.num_ack_pending };
}

describe('deliveries the hub did not send', () => {
  it('never reach an agent: a forged envelope on its inbox subject is removed with a warning naming the agent', async () => {
    const logger = recordingLogger();
    const { client, prefix } = await net(logger);
    const handled: Envelope[] = [];
    const bob = await client.register(
      { name: 'bob' },
      {
        handler: async (e, self) => {
          handled.push(e);
          if (isInviteFor(self, e)) await ackInvite(self, e);
        },
      },
    );
    const alice = await client.registerHuman({ name: 'alice' });

    await forge(prefix, bob.agentId, { event_data: { text: 'forged' } });
    // A real delivery after the forged one: once it is handled, the forged one (earlier in the stream) was seen.
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('real');
    await waitFor(() => handled.some((e) => e.event_data['text'] === 'real'), { timeoutMs: 10_000 });

    expect(handled.filter((e) => e.event_type === EV_TEXT).map((e) => e.event_data['text'])).toEqual(['real']);
    const dropped = logger.warnings.filter((w) => w.msg === 'dropping a delivery the hub did not send');
    expect(dropped.map((w) => Object.entries(w.obj).filter(([k]) => k === 'agent' || k === 'agentId'))).toEqual([
      [
        ['agent', 'bob'],
        ['agentId', bob.agentId],
      ],
    ]);
    await waitFor(async () => (await backlog(prefix, bob.agentId)).ackPending === 0, { timeoutMs: 10_000 });
    expect(await backlog(prefix, bob.agentId)).toEqual({ pending: 0, ackPending: 0 });
  });

  it('never make a person accept a forged invite', async () => {
    const logger = recordingLogger();
    const { client, prefix } = await net(logger);
    const carol = await client.registerHuman({ name: 'carol' });
    const alice = await client.registerHuman({ name: 'alice' });
    // Every post carol makes is a request on her post subject; on an unsecured server anyone may listen to it.
    const posts: { causation_id: unknown }[] = [];
    const sub = raw.subscribe(hubNames(prefix).rpc('post', carol.agentId), {
      callback: (_err, m) => void posts.push(m.json<{ causation_id: unknown }>()),
    });
    open.push({
      close: () => {
        sub.unsubscribe();
        return Promise.resolve();
      },
    });
    await raw.flush();
    const seen: Envelope[] = [];
    carol.onEnvelope((e) => void seen.push(e));

    const forgedInvite = newId();
    await forge(prefix, carol.agentId, {
      envelope_id: forgedInvite,
      event_type: EV_CHANNEL_INVITE,
      event_data: { channel_id: newId() },
    });
    // A real invite after the forged one: carol accepts it, and only it.
    const channel = await alice.open({ type: 'conversation', target: 'carol' });
    const realInvite = await waitFor(() => seen.find((e) => e.event_type === EV_CHANNEL_INVITE));
    await waitFor(() => posts.length > 0);

    expect(seen.filter((e) => e.event_type === EV_CHANNEL_INVITE).map((e) => e.channel_id)).toEqual([
      channel.channelId,
    ]);
    expect(posts.map((p) => p.causation_id)).toEqual([realInvite?.envelope_id]);
    expect(logger.warnings.map((w) => w.msg)).toContain('dropping a delivery the hub did not send');
  });

  it('are accepted when they carry the hub origin mark, which the hub sets on every delivery', async () => {
    const { client, prefix } = await net(recordingLogger());
    const dave = await client.registerHuman({ name: 'dave' });
    const h = headers();
    h.set(DeliveryHeader.Origin, DELIVERY_ORIGIN_HUB);
    const marked = dave.nextEnvelope({ timeout: 10_000 });
    const id = newId();
    await jetstream(raw).publish(
      hubNames(prefix).inbox(dave.agentId),
      JSON.stringify({
        envelope_id: id,
        channel_id: newId(),
        sender_id: newId(),
        event_type: EV_TEXT,
        event_data: { text: 'marked' },
        audience: null,
        causation_id: null,
        depth: 0,
        sequence: 1,
        created_at: new Date().toISOString(),
      }),
      { headers: h },
    );
    // The control: the same path with the mark is delivered, so the refusals above are the mark's doing.
    expect((await marked)?.envelope_id).toBe(id);
  });
});
