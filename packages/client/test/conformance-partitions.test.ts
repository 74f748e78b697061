import { HubRpc, type HubCallOptions } from '@ag2net/client';
import { IdSchema } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { readPartitionsFixture, type PartitionsFixture } from '../../protocol/test/partitions-fixture.js';

// conformance/fixtures/partitions.json: where every client sends each request of a partitioned deployment.
const fixture = readPartitionsFixture();

/** A connection that records the subject of every request and never answers (each call fails after its send). */
function recorder(): { nc: NatsConnection; subjects: string[] } {
  const subjects: string[] = [];
  const fake = {
    request(subject: string): Promise<never> {
      subjects.push(subject);
      return Promise.reject(new Error('recorded'));
    },
  };
  // Only `request` is used by HubRpc; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, subjects };
}

/** One call of the fixture's example operations, about `channelId` where the operation names a channel. */
function callOf(op: string, channelId: string): (rpc: HubRpc, options: HubCallOptions) => Promise<unknown> {
  switch (op) {
    case 'post':
      return (rpc, o) =>
        rpc.call('post', { channel_id: channelId, sender_id: 'alice-1', event_type: 'ag2.msg.text' }, o);
    case 'getChannel':
      return (rpc, o) => rpc.call('getChannel', { channel_id: channelId }, o);
    case 'listChannels':
      return (rpc, o) => rpc.call('listChannels', {}, o);
    case 'register':
      return (rpc, o) => rpc.call('register', { passport: { name: 'alice' } }, o);
    case 'getTask':
      return (rpc, o) => rpc.call('getTask', { task_id: 't-1' }, o);
    default:
      throw new Error(`no request for ${op} in this test`);
  }
}

/** The subject `HubRpc` sends one request of `example.op` to, in a deployment of `partitions` partitions. */
async function subjectOf(
  partitions: number,
  example: Omit<PartitionsFixture['subjects']['examples'][number], 'subject'>,
): Promise<string | undefined> {
  const { nc, subjects } = recorder();
  const rpc = new HubRpc(nc, { prefix: fixture.subjects.prefix, partitions, retryForMs: 0 });
  const options = {
    ...(example.caller === undefined ? {} : { caller: example.caller }),
    ...(example.partition === undefined ? {} : { partition: example.partition }),
  };
  await callOf(example.op, example.channel_id ?? 'unused')(rpc, options).catch(() => undefined);
  expect(subjects).toHaveLength(1);
  return subjects[0];
}

describe('partitions.json: where the TypeScript client sends', () => {
  it('routes each operation as the fixture says', async () => {
    const { examples, partitions } = fixture.subjects;
    for (const example of examples) expect(await subjectOf(partitions, example)).toBe(example.subject);
  });

  it("sends a channel's operations to the fixture's partition of it, for every partition count it lists", async () => {
    const valid = fixture.channels.filter((c) => IdSchema.safeParse(c.channel_id).success);
    expect(valid.length).toBeGreaterThanOrEqual(14);
    for (const { channel_id, partition } of valid) {
      for (const [count, k] of Object.entries(partition)) {
        const expected = count === '1' ? 'acme.hub.v1.getChannel.alice-1' : `acme.hub.v1.getChannel.${k}.alice-1`;
        expect(await subjectOf(Number(count), { op: 'getChannel', channel_id, caller: 'alice-1' })).toBe(expected);
      }
    }
  });

  it("sends every operation of a deployment with one partition to today's subject", async () => {
    const { op, caller, subject } = fixture.subjects.one_partition;
    expect(await subjectOf(1, { op, caller, channel_id: '01HZY3K4Q7M2N8P5R6S7T8V9W0' })).toBe(subject);
  });
});
