/**
 * `getWalRange` reads a short range of one channel's WAL subject: with batch direct gets where the server has them
 * (nats-server 2.11+), with one leader read per message where it does not (2.9.10), and gives the same messages either
 * way. Every test also counts the requests the server saw, so that it cannot pass on the wrong path.
 */
import { walStreamConfig } from '@ag2net/hub/internal';
import { WalHeader } from '@ag2net/protocol/internal';
import { hubNames, type HubNames } from '@ag2net/protocol';
import { natsPerFile, pauseProcess, resumeProcess, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { TimeoutError, connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAL_RANGE_BATCH, getWalRange, type RawWalMessage, type ScanOptions } from '../src/operations/wal-scan.js';
import { BATCH_DIRECT_GET_SINCE, hasBatchDirectGet, versionAtLeast } from '../src/nats/batch-direct-get.js';

const nats = natsPerFile();

/** The requests a stream's reads sent: batch direct gets (their `batch`) and leader reads. */
interface Reads {
  readonly batches: number[];
  readonly leaderReads: number;
}

let nc: NatsConnection;
let spy: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
/** A manager whose requests time out after 1 s, for the test that stops the server. */
let impatient: JetStreamManager;
/** Whether the server under test has batch direct get: any but the floor's 2.9 and a 2.10. */
let batched: boolean;

beforeAll(async () => {
  nc = await connect({ servers: nats.url });
  spy = await connect({ servers: nats.url });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  impatient = await jetstreamManager(nc, { timeout: 1_000 });
  const version = nc.info?.version ?? '';
  batched = !/^2\.(9|10)\./.test(version);
});

afterAll(async () => {
  await spy?.close();
  await nc?.close();
});

/** A WAL stream on a fresh prefix, and a counter of the reads sent to it (as a second connection sees them). */
async function freshWal(): Promise<{ names: HubNames; reads: () => Promise<Reads> }> {
  const names = hubNames(uniqueName('wr'));
  await jsm.streams.add(walStreamConfig(names, 1));
  let batches: number[] = [];
  let leaderReads = 0;
  spy.subscribe(`$JS.API.DIRECT.GET.${names.walStream}`, {
    callback: (_err, msg) => {
      const body: unknown = msg.json();
      batches.push(typeof body === 'object' && body !== null && 'batch' in body ? Number(body.batch) : 0);
    },
  });
  spy.subscribe(`$JS.API.STREAM.MSG.GET.${names.walStream}`, {
    callback: () => {
      leaderReads += 1;
    },
  });
  await spy.flush();
  return {
    names,
    reads: async () => {
      // The server copied each request to the spy before it answered it; a round trip of the spy's flushes them.
      await spy.flush();
      const seen = { batches, leaderReads };
      batches = [];
      leaderReads = 0;
      return seen;
    },
  };
}

/** Publishes onto `channel`'s WAL subject, with the hub's headers unless `hub` is `null`; what a read returns. */
async function put(
  names: HubNames,
  channel: string,
  data: string,
  hub: { readonly epoch: string; readonly sequence: string } | null,
): Promise<RawWalMessage> {
  const subject = names.wal(channel);
  const h = headers();
  if (hub !== null) {
    h.set(WalHeader.Epoch, hub.epoch);
    h.set(WalHeader.Sequence, hub.sequence);
  }
  const { seq } = await js.publish(subject, data, hub === null ? {} : { headers: h });
  return { subject, streamSeq: seq, data, epoch: hub?.epoch ?? null, sequence: hub?.sequence ?? null };
}

async function collect(names: HubNames, range: Omit<ScanOptions, 'subject'> & { channel: string }) {
  const out: RawWalMessage[] = [];
  const options = {
    subject: names.wal(range.channel),
    fromStreamSeq: range.fromStreamSeq,
    toStreamSeq: range.toStreamSeq,
  };
  for await (const m of getWalRange(jsm, names, options)) out.push(m);
  return out;
}

/** Whether process `pid` is stopped (state `T` in `/proc/<pid>/stat`), so that a signal to stop it took effect. */
function stopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

/** Channel `a`'s entries between other channels', one of them not the hub's (no headers, empty body). */
async function interleaved(names: HubNames) {
  const a1 = await put(names, 'a', '{"n":1}', { epoch: '3', sequence: '1' });
  const b1 = await put(names, 'b', '{"b":1}', { epoch: '3', sequence: '1' });
  const a2 = await put(names, 'a', '{"n":2}', { epoch: '3', sequence: '2' });
  const b2 = await put(names, 'b', '{"b":2}', null);
  const b3 = await put(names, 'b', '{"b":3}', null);
  const a3 = await put(names, 'a', '', null);
  const a4 = await put(names, 'a', '{"n":3}', { epoch: '4', sequence: '3' });
  return { a: [a1, a2, a3, a4], b: [b1, b2, b3] } as const;
}

describe('batch direct get support', () => {
  it('is nats-server 2.11.0 or later, compared numerically', () => {
    expect(BATCH_DIRECT_GET_SINCE).toBe('2.11.0');
    const cases: [string | undefined, boolean][] = [
      ['2.9.10', false],
      ['2.10.29', false],
      ['2.11.0', true],
      ['2.11.0-RC.1', true],
      ['2.15.1', true],
      ['2.100.0', true],
      ['3.0.0', true],
      ['v2.12.3', true],
      ['1.99.99', false],
      ['', false],
      ['garbage', false],
      [undefined, false],
    ];
    for (const [version, expected] of cases)
      expect([version, versionAtLeast(version, '2.11.0')]).toEqual([version, expected]);
    expect(hasBatchDirectGet({ info: undefined })).toBe(false);
  });

  it('is what the connection says of the server under test', () => {
    expect(hasBatchDirectGet(nc)).toBe(batched);
  });
});

describe('getWalRange', () => {
  it("reads a channel's entries between other channels', in order, with their headers", async () => {
    const { names, reads } = await freshWal();
    const { a } = await interleaved(names);
    const [a1, a2, a3, a4] = a;
    await reads();

    expect(await collect(names, { channel: 'a', fromStreamSeq: a1.streamSeq, toStreamSeq: a4.streamSeq })).toEqual(a);
    expect(await reads()).toEqual(batched ? { batches: [7], leaderReads: 0 } : { batches: [], leaderReads: 4 });

    // From between two entries, through one that is not the last: it stops after `toStreamSeq`.
    expect(await collect(names, { channel: 'a', fromStreamSeq: a1.streamSeq + 1, toStreamSeq: a3.streamSeq })).toEqual([
      a2,
      a3,
    ]);
    expect(await reads()).toEqual(batched ? { batches: [5], leaderReads: 0 } : { batches: [], leaderReads: 2 });
  });

  it('reads a range past the end of the log up to the last entry, and the leader confirms the end', async () => {
    const { names, reads } = await freshWal();
    const { a } = await interleaved(names);
    await reads();

    const to = (a[3]?.streamSeq ?? 0) + 50;
    expect(await collect(names, { channel: 'a', fromStreamSeq: 1, toStreamSeq: to })).toEqual(a);
    expect(await reads()).toEqual(batched ? { batches: [to], leaderReads: 1 } : { batches: [], leaderReads: 5 });
  });

  it('reads nothing from an empty range', async () => {
    const { names, reads } = await freshWal();
    const { a, b } = await interleaved(names);
    const [, b2, b3] = b;
    await reads();

    // Before it starts: no request at all.
    expect(await collect(names, { channel: 'a', fromStreamSeq: 5, toStreamSeq: 4 })).toEqual([]);
    expect(await reads()).toEqual({ batches: [], leaderReads: 0 });

    // Only other channels' entries in it: the batch's first entry is already past the range.
    const between = { fromStreamSeq: b2?.streamSeq ?? 0, toStreamSeq: b3?.streamSeq ?? 0 };
    expect(await collect(names, { channel: 'a', ...between })).toEqual([]);
    expect(await reads()).toEqual(batched ? { batches: [2], leaderReads: 0 } : { batches: [], leaderReads: 1 });

    // A channel with no entry at all: the batch finds nothing (a 404), and neither does the leader.
    expect(await collect(names, { channel: 'c', fromStreamSeq: 1, toStreamSeq: a[3]?.streamSeq ?? 0 })).toEqual([]);
    expect(await reads()).toEqual(batched ? { batches: [7], leaderReads: 1 } : { batches: [], leaderReads: 1 });
  });

  it('reads a range longer than one batch in batches of WAL_RANGE_BATCH', async () => {
    const { names, reads } = await freshWal();
    const count = 2 * WAL_RANGE_BATCH + 88;
    const expected: RawWalMessage[] = [];
    for (let i = 1; i <= count; i += 1) {
      expected.push(await put(names, 'a', `{"n":${i}}`, { epoch: '1', sequence: String(i) }));
      if (i % 5 === 0) await put(names, 'b', `{"b":${i}}`, null);
    }
    await put(names, 'a', '{"after":true}', { epoch: '1', sequence: String(count + 1) });
    await reads();
    const to = expected.at(-1)?.streamSeq ?? 0;

    expect(await collect(names, { channel: 'a', fromStreamSeq: 1, toStreamSeq: to })).toEqual(expected);
    // The third batch starts after the second's last entry and asks for no more than the rest of the range.
    const third = (expected[2 * WAL_RANGE_BATCH - 1]?.streamSeq ?? 0) + 1;
    expect(await reads()).toEqual(
      batched
        ? { batches: [WAL_RANGE_BATCH, WAL_RANGE_BATCH, to - third + 1], leaderReads: 0 }
        : { batches: [], leaderReads: count },
    );
  });

  it('fails with a timeout when the server stops answering mid-range, after yielding only what it answered', async () => {
    const { names, reads } = await freshWal();
    const count = WAL_RANGE_BATCH + 10;
    for (let i = 1; i <= count; i += 1) await put(names, 'a', `{"n":${i}}`, { epoch: '1', sequence: String(i) });
    await reads();

    const yielded: RawWalMessage[] = [];
    let failure: unknown = null;
    const range = getWalRange(impatient, names, { subject: names.wal('a'), fromStreamSeq: 1, toStreamSeq: count });
    try {
      for await (const m of range) {
        yielded.push(m);
        if (yielded.length === 1) {
          pauseProcess(nats.server.pid);
          await waitFor(() => stopped(nats.server.pid));
        }
      }
    } catch (err) {
      failure = err;
    } finally {
      resumeProcess(nats.server.pid);
    }
    expect(failure).toBeInstanceOf(TimeoutError);
    expect(yielded.map((m) => m.streamSeq)).toEqual(
      Array.from({ length: batched ? WAL_RANGE_BATCH : 1 }, (_, i) => i + 1),
    );
  });
});
