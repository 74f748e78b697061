import { ConversationAdapter } from '@ag2net/adapters';
import { buildParticipants } from '@ag2net/adapters/internal';
import { ChannelMetadataSchema, ChannelState, EV_TEXT, createEnvelope } from '@ag2net/protocol';
import { KeyedSerial } from '@ag2net/protocol/internal';
import type { KV } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../base/logger.js';
import { applyAppended, newRuntime, type ChannelRuntime } from './channel-runtime.js';
import { ChannelTable } from './channel-table.js';
import { SEQ_CHUNK } from './snapshot-record.js';
import { SNAPSHOT_EVERY, SnapshotStore } from './snapshot-store.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** A bucket whose every put waits until the test lets it through, recording the order of what reached it. */
function gatedBucket() {
  const stored: { op: string; key: string; sequence?: number }[] = [];
  const gates: (() => void)[] = [];
  const waitGate = (): Promise<void> => new Promise((resolve) => gates.push(resolve));
  /** Keys whose next put fails (once each). */
  const failing = new Set<string>();
  const kv = {
    async put(key: string, value: string): Promise<number> {
      await waitGate();
      if (failing.delete(key)) throw new Error(`put of ${key} refused`);
      // A record says the sequence it covers; a chunk of stream sequences how many it holds.
      const sequence = key.startsWith('seqs.')
        ? value.split(',').length
        : (JSON.parse(value) as { sequence: number }).sequence;
      stored.push({ op: 'put', key, sequence });
      return stored.length;
    },
    delete(key: string): Promise<void> {
      stored.push({ op: 'delete', key });
      return Promise.resolve();
    },
    get(key: string): Promise<{ operation: string } | null> {
      return Promise.resolve(stored.some((s) => s.key === key && s.op === 'put') ? { operation: 'PUT' } : null);
    },
    purge(key: string): Promise<void> {
      stored.push({ op: 'purge', key });
      return Promise.resolve();
    },
    // The keys under a filter ending in `*`, of what was put and not purged since.
    keys(filter: string): Promise<Iterable<string>> {
      const prefix = filter.slice(0, -1);
      const live = new Set<string>();
      for (const s of stored) {
        if (!s.key.startsWith(prefix)) continue;
        if (s.op === 'put') live.add(s.key);
        else live.delete(s.key);
      }
      return Promise.resolve([...live]);
    },
  };
  return {
    // Only put, delete, get, purge and keys are used by the store's writes and removal.
    kv: kv as unknown as KV,
    stored,
    failing,
    /** Lets the oldest waiting put through; false when none waits. */
    release(): boolean {
      const next = gates.shift();
      next?.();
      return next !== undefined;
    },
    waiting: () => gates.length,
  };
}

function conversation(): ChannelRuntime {
  const adapter = new ConversationAdapter();
  const metadata = ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: adapter.manifest,
    creator_id: 'alice',
    participants: buildParticipants('alice', ['bob'], new Date(T0).toISOString()),
    state: ChannelState.Active,
    pending_acks: [],
    created_at: new Date(T0).toISOString(),
  });
  return newRuntime(metadata, null, null);
}

function say(rt: ChannelRuntime, n: number): void {
  const envelope = createEnvelope({
    channel_id: 'c1',
    sender_id: 'alice',
    event_type: EV_TEXT,
    event_data: { text: `line ${n}` },
    envelope_id: `e${n}`,
    created_at: new Date(T0 + n).toISOString(),
    sequence: n,
  });
  applyAppended(rt, envelope, n * 3);
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function storeWith(bucket: ReturnType<typeof gatedBucket>, rt: ChannelRuntime, mayWrite = () => true) {
  const serial = new KeyedSerial();
  const channels = new ChannelTable({} as never);
  channels.set(rt);
  const store = new SnapshotStore(bucket.kv, { serial, channels, mayWrite, logger: silentLogger });
  return { serial, store };
}

describe('snapshot writes', () => {
  it('leave the channel’s serial slot before the bucket answers: the next post does not wait for them', async () => {
    const bucket = gatedBucket();
    const rt = conversation();
    say(rt, 1);
    const { serial, store } = storeWith(bucket, rt);
    store.schedule('c1');
    // The next holder of the slot runs while the snapshot's put still waits on the bucket.
    const next = await serial.run('c1', () => Promise.resolve('admitted'));
    expect(next).toBe('admitted');
    await tick();
    expect(bucket.waiting()).toBe(1);
    expect(bucket.stored).toEqual([]);
    let idle = false;
    const settled = store.idle().then(() => {
      idle = true;
    });
    await tick();
    expect(idle).toBe(false);
    bucket.release();
    await settled;
    expect(bucket.stored).toEqual([{ op: 'put', key: 'open.c1', sequence: 1 }]);
  });

  it('are written in the order they were taken, each as it was when taken, and a removal waits for them', async () => {
    const bucket = gatedBucket();
    const rt = conversation();
    say(rt, 1);
    const { serial, store } = storeWith(bucket, rt);
    store.schedule('c1');
    await tick();
    say(rt, 2);
    say(rt, 3);
    store.schedule('c1');
    // Retention removes a channel's snapshots in its slot, as here.
    const removed = serial.run('c1', () => store.remove('c1'));
    await tick();
    // What the channel does after a snapshot was taken is not in it.
    say(rt, 4);
    // One put at a time: the second waits for the first to be stored.
    expect(bucket.waiting()).toBe(1);
    expect(bucket.release()).toBe(true);
    await tick();
    expect(bucket.waiting()).toBe(1);
    expect(bucket.release()).toBe(true);
    await removed;
    expect(bucket.stored).toEqual([
      { op: 'put', key: 'open.c1', sequence: 1 },
      { op: 'put', key: 'open.c1', sequence: 3 },
      { op: 'purge', key: 'open.c1' },
    ]);
  });

  it('are not written by a hub that lost its lease between taking and writing them', async () => {
    const bucket = gatedBucket();
    const rt = conversation();
    say(rt, 1);
    let holds = true;
    const { store } = storeWith(bucket, rt, () => holds);
    const first = store.write(rt);
    say(rt, 2);
    const second = store.write(rt);
    await tick();
    holds = false;
    bucket.release();
    expect(await first).toBe(true);
    expect(await second).toBe(false);
    expect(bucket.stored).toEqual([{ op: 'put', key: 'open.c1', sequence: 1 }]);
    expect(bucket.waiting()).toBe(0);
  });

  it('of a long channel write each chunk of its stream sequences once, before the first record that counts it', async () => {
    const bucket = gatedBucket();
    const rt = conversation();
    for (let n = 1; n <= SEQ_CHUNK + 1; n += 1) say(rt, n);
    const { store } = storeWith(bucket, rt);
    const first = store.write(rt);
    say(rt, SEQ_CHUNK + 2);
    const second = store.write(rt);
    // Three puts, each let through once it reached the bucket.
    for (let i = 0; i < 3; i += 1) {
      while (bucket.waiting() === 0) await tick();
      bucket.release();
    }
    expect([await first, await second]).toEqual([true, true]);
    expect(bucket.stored).toEqual([
      { op: 'put', key: 'seqs.c1.0', sequence: SEQ_CHUNK },
      { op: 'put', key: 'open.c1', sequence: SEQ_CHUNK + 1 },
      { op: 'put', key: 'open.c1', sequence: SEQ_CHUNK + 2 },
    ]);

    // A record is never stored before its chunks, even when an earlier snapshot's chunk write failed after the next
    // snapshot was taken.
    const again = gatedBucket();
    again.failing.add('seqs.c1.0');
    const { store: next } = storeWith(again, rt);
    const failed = next.write(rt);
    say(rt, SEQ_CHUNK + 3);
    const after = next.write(rt);
    for (let i = 0; i < 3; i += 1) {
      while (again.waiting() === 0) await tick();
      again.release();
    }
    expect([await failed, await after]).toEqual([false, true]);
    expect(again.stored).toEqual([
      { op: 'put', key: 'seqs.c1.0', sequence: SEQ_CHUNK },
      { op: 'put', key: 'open.c1', sequence: SEQ_CHUNK + 3 },
    ]);

    // Removing the channel's snapshots removes its chunks too.
    await store.remove('c1');
    expect(bucket.stored.slice(3)).toEqual([
      { op: 'purge', key: 'open.c1' },
      { op: 'purge', key: 'seqs.c1.0' },
    ]);
  });

  it('are taken once per SNAPSHOT_EVERY envelopes, however many posts append while one waits for its slot or write', async () => {
    const bucket = gatedBucket();
    const rt = conversation();
    const { serial, store } = storeWith(bucket, rt);
    // A hot channel: posts always queued in its slot, each appending and then letting the next one queue, so that
    // a snapshot scheduled by one post is taken after the ones queued before it.
    const total = SNAPSHOT_EVERY + 30;
    let next = 1;
    const allPosted = new Promise<void>((resolve) => {
      const queuePost = (): void => {
        const n = next;
        next += 1;
        void serial.run('c1', () => {
          say(rt, n);
          store.afterAppend(rt);
          if (next <= total) queuePost();
          if (n === total) resolve();
          return Promise.resolve();
        });
      };
      for (let i = 0; i < 4; i += 1) queuePost();
    });
    await allPosted;
    await serial.run('c1', () => Promise.resolve());
    for (let i = 0; i < 100 && bucket.waiting() > 0; i += 1) {
      bucket.release();
      await tick();
    }
    await store.idle();
    // One snapshot, taken after the three posts queued when the threshold was passed, not one per post appended
    // while it waited.
    expect(bucket.stored).toEqual([{ op: 'put', key: 'open.c1', sequence: SNAPSHOT_EVERY + 3 }]);

    // The next one comes SNAPSHOT_EVERY envelopes after the one taken, not after the threshold was first passed.
    for (let n = total + 1; n < 2 * SNAPSHOT_EVERY + 3; n += 1) {
      say(rt, n);
      store.afterAppend(rt);
    }
    await tick();
    expect(bucket.waiting()).toBe(0);
    say(rt, 2 * SNAPSHOT_EVERY + 3);
    store.afterAppend(rt);
    await tick();
    bucket.release();
    await store.idle();
    expect(bucket.stored).toEqual([
      { op: 'put', key: 'open.c1', sequence: SNAPSHOT_EVERY + 3 },
      { op: 'put', key: 'open.c1', sequence: 2 * SNAPSHOT_EVERY + 3 },
    ]);
  });
});
