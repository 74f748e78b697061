import { EnvelopeSchema, InternalError, partitionOf } from '@ag2net/protocol';
import { errors, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { HubRpc, HubUnavailableError } from './rpc.js';

/** A `health` answer of a deployment of `partitions` partitions. */
function health(partitions: number): unknown {
  return {
    hub_id: 'hub-1',
    role: 'active',
    epoch: 3,
    active_channels: 0,
    registered_agents: 0,
    adapters_loaded: 0,
    uptime_seconds: 1,
    quarantined: 0,
    dead_letters: 0,
    partitions,
    held: [],
  };
}

/** What the fake answers a request on `subject` with: a reply, or a failure to reject with. */
type Answer = { readonly result: unknown } | { readonly reply: unknown } | Error;

/** The canned result of each operation these tests call (its first subject token after `hub.v1.`). */
const RESULTS: Record<string, unknown> = {
  post: { envelope_id: 'env-1', sequence: 1, created_at: '2025-01-01T00:00:00Z' },
  canSend: { allowed: true },
  listChannels: { channels: [], next_cursor: null },
  pendingTurnsFor: { turns: [] },
  deliveryLag: { delivery: null },
  findAgentId: { agent_id: null },
};

/**
 * A connection that records every request (subject and payload) and answers it with `answer(subject, n)` (n: how
 * many requests went to that operation before), by default a deployment of `partitions` partitions.
 */
function fakeHub(
  partitions: number,
  answer?: (op: string, n: number) => Answer | undefined,
): { nc: NatsConnection; sent: { subject: string; payload: string }[] } {
  const sent: { subject: string; payload: string }[] = [];
  const counts = new Map<string, number>();
  const fake = {
    request(subject: string, payload: string): Promise<{ string(): string }> {
      sent.push({ subject, payload });
      const op = subject.split('.')[3] ?? '';
      const n = counts.get(op) ?? 0;
      counts.set(op, n + 1);
      const given = answer?.(op, n) ?? { result: op === 'health' ? health(partitions) : RESULTS[op] };
      if (given instanceof Error) return Promise.reject(given);
      const reply = 'reply' in given ? given.reply : { ok: true, result: given.result };
      return Promise.resolve({ string: () => JSON.stringify(reply) });
    },
  };
  // Only `request` is used by HubRpc; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, sent };
}

const subjects = (sent: readonly { subject: string }[]): string[] => sent.map((s) => s.subject);
const as = { caller: 'agent-7' };
const post = { channel_id: '01HZY3K4Q7M2N8P5R6S7T8V9W0', sender_id: 'agent-7', event_type: 'ag2.msg.text' };
const noResponders = (): Error =>
  new errors.RequestError('no responders', { cause: new errors.NoRespondersError('k2.hub.v1.post') });

describe('HubRpc routing with one partition', () => {
  it('asks health once, then sends every operation to the subject of a hub without partitions', async () => {
    const { nc, sent } = fakeHub(1);
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    await rpc.call('post', post, as);
    await rpc.call('canSend', { channel_id: 'ch-1' }, as);
    await rpc.call('listChannels', {}, as);
    await rpc.call('pendingTurnsFor', {}, as);
    await rpc.call('deliveryLag', {}, { caller: '$operator' });
    await rpc.call('findAgentId', { name: 'scholar' });
    expect(subjects(sent)).toEqual([
      'k2.hub.v1.health',
      'k2.hub.v1.post.agent-7',
      'k2.hub.v1.canSend.agent-7',
      'k2.hub.v1.listChannels.agent-7',
      'k2.hub.v1.pendingTurnsFor.agent-7',
      'k2.hub.v1.deliveryLag.$operator',
      'k2.hub.v1.findAgentId',
    ]);
    expect(await rpc.partitions()).toBe(1);
    expect(sent).toHaveLength(7);
  });

  it('names a channel a creation without a channel_id creates, so that a resend is the same creation', async () => {
    const { nc, sent } = fakeHub(1, (op, n) =>
      op === 'createChannel' ? (n === 0 ? noResponders() : { reply: notFound }) : undefined,
    );
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 1, retryForMs: 5_000 });
    await expect(rpc.call('createChannel', { type: 'conversation', participants: ['b'] }, as)).rejects.toThrow(
      'no such type',
    );
    expect(subjects(sent)).toEqual(['k2.hub.v1.createChannel.agent-7', 'k2.hub.v1.createChannel.agent-7']);
    const ids = sent.map((m) => (JSON.parse(m.payload) as { channel_id: string }).channel_id);
    expect(ids[0]).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(ids[1]).toBe(ids[0]);
  });

  it('refuses a partition other than 0 for a scattered operation', async () => {
    const { nc, sent } = fakeHub(1);
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 1 });
    await expect(rpc.call('listChannels', {}, { ...as, partition: 1 })).rejects.toThrow(
      new RangeError('listChannels: partition must be an integer from 0 to 0, not 1'),
    );
    expect(sent).toEqual([]);
  });
});

const notFound = { ok: false, error: { code: 'not_found', message: 'no such type' } };

describe('HubRpc routing with 16 partitions', () => {
  it("sends a channel's operations to its partition's subject", async () => {
    const { nc, sent } = fakeHub(16);
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 16 });
    await rpc.call('post', post, as);
    await rpc.call('canSend', { channel_id: '01HF7YB9EYDRYQ0W4Y5DB78W8D' }, as);
    await rpc.call('canSend', { channel_id: 'foobar' }, as);
    expect(subjects(sent)).toEqual([
      'k2.hub.v1.post.1.agent-7',
      'k2.hub.v1.canSend.14.agent-7',
      'k2.hub.v1.canSend.8.agent-7',
    ]);
  });

  it('sends a scattered operation to the partition named in the options', async () => {
    const { nc, sent } = fakeHub(16);
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 16 });
    await rpc.call('listChannels', {}, { ...as, partition: 0 });
    await rpc.call('pendingTurnsFor', {}, { ...as, partition: 15 });
    await rpc.call('deliveryLag', {}, { caller: '$operator', partition: 7 });
    expect(subjects(sent)).toEqual([
      'k2.hub.v1.listChannels.0.agent-7',
      'k2.hub.v1.pendingTurnsFor.15.agent-7',
      'k2.hub.v1.deliveryLag.7.$operator',
    ]);
  });

  it('refuses a scattered operation without a partition, or with one out of range, sending nothing', async () => {
    const { nc, sent } = fakeHub(16);
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 16 });
    await expect(rpc.call('pendingTurnsFor', {}, as)).rejects.toThrow(
      new TypeError(
        "pendingTurnsFor is answered by each of the deployment's 16 partitions for its own channels: options.partition must name one, from 0 to 15",
      ),
    );
    await expect(rpc.call('listChannels', {}, { ...as, partition: 16 })).rejects.toThrow(
      new RangeError('listChannels: partition must be an integer from 0 to 15, not 16'),
    );
    await expect(rpc.call('deliveryLag', {}, { ...as, partition: 1.5 })).rejects.toThrow(RangeError);
    expect(sent).toEqual([]);
  });

  it('keeps home operations on the home subject, without asking the partition count', async () => {
    const { nc, sent } = fakeHub(16);
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    await rpc.call('findAgentId', { name: 'scholar' });
    await rpc.call('health', {});
    expect(subjects(sent)).toEqual(['k2.hub.v1.findAgentId', 'k2.hub.v1.health']);
  });

  it('sends a createChannel without a channel_id to the partition of the id it names the channel with', async () => {
    const { nc, sent } = fakeHub(16, (op) => (op === 'createChannel' ? { reply: notFound } : undefined));
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 16 });
    await expect(rpc.call('createChannel', { type: 'conversation', participants: ['b'] }, as)).rejects.toThrow(
      'no such type',
    );
    expect(sent).toHaveLength(1);
    const { channel_id } = JSON.parse(sent[0]?.payload ?? '{}') as { channel_id: string };
    expect(subjects(sent)).toEqual([`k2.hub.v1.createChannel.${partitionOf(channel_id, 16)}.agent-7`]);
  });

  it("sends a createChannel with a channel_id to that channel's partition", async () => {
    const { nc, sent } = fakeHub(16, (op) => (op === 'createChannel' ? { reply: notFound } : undefined));
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 16 });
    const request = { channel_id: '01HF7YAT00SP5TCVVJ7RV6N93N', type: 'conversation', participants: ['b'] };
    await expect(rpc.call('createChannel', request, as)).rejects.toThrow('no such type');
    expect(subjects(sent)).toEqual(['k2.hub.v1.createChannel.3.agent-7']);
  });

  it('resends a request its partition did not answer (moving between hubs) to the same subject, unchanged', async () => {
    const { nc, sent } = fakeHub(16, (op, n) => (op === 'post' && n < 2 ? noResponders() : undefined));
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 16, retryForMs: 5_000 });
    const ack = await rpc.call('post', post, as);
    expect(ack).toEqual(RESULTS['post']);
    expect(subjects(sent)).toEqual(Array.from({ length: 3 }, () => 'k2.hub.v1.post.1.agent-7'));
    const [first, ...resent] = sent.map((s) => s.payload);
    expect(resent).toEqual([first, first]);
    const body = EnvelopeSchema.parse(JSON.parse(first ?? ''));
    // The id minted once, before the first attempt, travels in every resend: the hub admits the post once.
    expect([body.channel_id, body.envelope_id]).toEqual([post.channel_id, expect.stringMatching(/^[0-9A-Z]{26}$/)]);
  });
});

describe('HubRpc partition count', () => {
  it('is what the options say, checked, without a request', async () => {
    const { nc, sent } = fakeHub(4);
    expect(await new HubRpc(nc, { partitions: 256 }).partitions()).toBe(256);
    expect(sent).toEqual([]);
    for (const bad of [0, 257, 1.5, Number.NaN]) {
      expect(() => new HubRpc(nc, { partitions: bad })).toThrow(
        new RangeError(`partitions must be an integer from 1 to 256, not ${bad}`),
      );
    }
  });

  it("is asked of the hub's health once, however many calls wait for it at once", async () => {
    const { nc, sent } = fakeHub(4);
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    await Promise.all([
      rpc.call('post', post, as),
      rpc.call('canSend', { channel_id: 'foobar' }, as),
      rpc.call('listChannels', {}, { ...as, partition: 3 }),
      rpc.partitions(),
    ]);
    await rpc.call('pendingTurnsFor', {}, { ...as, partition: 2 });
    // fnv1a32 of the channel ids (1592888241 and 3214735720) mod 4.
    expect(subjects(sent)).toEqual([
      'k2.hub.v1.health',
      'k2.hub.v1.post.1.agent-7',
      'k2.hub.v1.canSend.0.agent-7',
      'k2.hub.v1.listChannels.3.agent-7',
      'k2.hub.v1.pendingTurnsFor.2.agent-7',
    ]);
    expect(await rpc.partitions()).toBe(4);
  });

  it('is asked again by the next call when the first ask failed', async () => {
    const { nc, sent } = fakeHub(4, (op, n) =>
      op === 'health' && n === 0 ? { result: { partitions: 4 } } : undefined,
    );
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    await expect(rpc.call('post', post, as)).rejects.toThrow(new InternalError('hub sent an invalid health result'));
    expect(await rpc.call('canSend', { channel_id: 'foobar' }, as)).toEqual({ allowed: true });
    await rpc.call('canSend', { channel_id: 'foobar' }, as);
    expect(subjects(sent)).toEqual([
      'k2.hub.v1.health',
      'k2.hub.v1.health',
      'k2.hub.v1.canSend.0.agent-7',
      'k2.hub.v1.canSend.0.agent-7',
    ]);
  });

  it("is asked within the call's retry budget, and a hub that never answers is named in the call's error", async () => {
    const { nc, sent } = fakeHub(4, () => noResponders());
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    const started = Date.now();
    await expect(rpc.call('post', post, { ...as, retryForMs: 150 })).rejects.toThrow(
      new HubUnavailableError(
        "no hub answered post within 150 ms: its health request, for the deployment's partition count, went unanswered",
      ),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(new Set(subjects(sent))).toEqual(new Set(['k2.hub.v1.health']));
  });

  it("is abandoned with the call's signal, and asked again by the next call", async () => {
    const { nc, sent } = fakeHub(4, (op, n) => (op === 'health' && n === 0 ? noResponders() : undefined));
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    const stop = new AbortController();
    const first = rpc.call('post', post, { ...as, signal: stop.signal });
    stop.abort();
    await expect(first).rejects.toMatchObject({ name: 'AbortError' });
    await rpc.call('post', post, as);
    expect(subjects(sent)).toEqual(['k2.hub.v1.health', 'k2.hub.v1.health', 'k2.hub.v1.post.1.agent-7']);
  });
});
