import { UnavailableError } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox, OutboxUnreachableError, inboxPrefixOf } from '../src/nats/outbox.js';

const nats = natsPerFile();
const STREAM = 'OUTBOX_T';

let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: nats.url, inboxPrefix: '_OUTBOX_T' });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: STREAM, subjects: ['outbox.t.>'] });
});

afterAll(async () => {
  await nc.close();
});

/** What `fn` rejects with (fails the test when it resolves). */
async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  return fn().then(
    (v: unknown) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
    },
    (err: unknown) => err,
  );
}

describe('Outbox', () => {
  it('sends what one turn queued in the order given, and answers each request from its own reply', async () => {
    using outbox = new Outbox(nc, inboxPrefixOf(await jetstreamManager(nc)));
    const seen: string[] = [];
    const sub = nc.subscribe('outbox.plain.*', {
      callback: (_err, msg) => {
        seen.push(`${msg.subject}=${msg.string()}`);
        if (msg.reply) msg.respond(`echo ${msg.string()}`);
      },
    });
    for (let i = 0; i < 5; i += 1) outbox.send(() => nc.publish(`outbox.plain.${i}`, `p${i}`));
    const answers = await Promise.all(
      [5, 6, 7].map((i) => outbox.request(`outbox.plain.${i}`, `r${i}`, { timeoutMs: 2_000 })),
    );
    expect(answers.map((m: Msg) => m.string())).toEqual(['echo r5', 'echo r6', 'echo r7']);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `outbox.plain.${i}=${i < 5 ? 'p' : 'r'}${i}`));
    sub.unsubscribe();
  });

  it('asks for answers under the connection inbox prefix', async () => {
    using outbox = new Outbox(nc, inboxPrefixOf(await jetstreamManager(nc)));
    let reply = '';
    const sub = nc.subscribe('outbox.prefix', {
      callback: (_err, msg) => {
        reply = msg.reply ?? '';
        msg.respond('ok');
      },
    });
    await outbox.request('outbox.prefix', 'x', { timeoutMs: 2_000 });
    expect(reply).toMatch(/^_OUTBOX_T\.[A-Za-z0-9]+\.[A-Za-z0-9]+$/);
    sub.unsubscribe();
  });

  it('publishes to a stream with a msg id and an expected last subject sequence, as the stream answers', async () => {
    using outbox = new Outbox(nc, undefined);
    const first = await outbox.publishToStream('outbox.t.a', 'one', { msgId: 'a-1', timeoutMs: 2_000 });
    expect(first).toMatchObject({ stream: STREAM, duplicate: false });
    const again = await outbox.publishToStream('outbox.t.a', 'one', { msgId: 'a-1', timeoutMs: 2_000 });
    expect(again).toEqual({ stream: STREAM, seq: first.seq, duplicate: true });
    const next = await outbox.publishToStream('outbox.t.a', 'two', {
      msgId: 'a-2',
      expectedLastSubjectSeq: first.seq,
      headers: headers(),
      timeoutMs: 2_000,
    });
    expect(next).toEqual({ stream: STREAM, seq: first.seq + 1, duplicate: false });

    const stale = await rejection(() =>
      outbox.publishToStream('outbox.t.a', 'three', {
        msgId: 'a-3',
        expectedLastSubjectSeq: first.seq,
        timeoutMs: 2_000,
      }),
    );
    expect(stale).toBeInstanceOf(JetStreamApiError);
    expect((stale as JetStreamApiError).code).toBe(JetStreamApiCodes.StreamWrongLastSequence);
    const stored = await (await jetstreamManager(nc)).streams.getMessage(STREAM, { last_by_subj: 'outbox.t.a' });
    expect(stored?.string()).toBe('two');
  });

  it('says nobody answered: no responders at once, silence at the deadline', async () => {
    using outbox = new Outbox(nc, undefined);
    const none = await rejection(() => outbox.publishToStream('outbox.nostream', 'x', { timeoutMs: 2_000 }));
    expect(none).toBeInstanceOf(OutboxUnreachableError);
    expect(none).toMatchObject({ reason: 'no_responders', message: 'no responders on outbox.nostream' });

    const sub = nc.subscribe('outbox.silent', { callback: () => undefined });
    const started = performance.now();
    const silent = await rejection(() => outbox.request('outbox.silent', 'x', { timeoutMs: 200 }));
    expect(silent).toMatchObject({ reason: 'timeout', message: 'no answer in time on outbox.silent' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    sub.unsubscribe();
  });

  it('refuses an answer that is not a PubAck', async () => {
    using outbox = new Outbox(nc, undefined);
    const sub = nc.subscribe('outbox.liar', {
      callback: (_err, msg) => {
        msg.respond('{"stream":"","seq":-1}');
      },
    });
    const err = await rejection(() => outbox.publishToStream('outbox.liar', 'x', { timeoutMs: 2_000 }));
    expect(err).toMatchObject({ message: "the stream's answer to a publish on 'outbox.liar' is not a PubAck" });
    sub.unsubscribe();
  });

  it('drops an answer to a token nobody waits on, and answers the waiting request from its own token only', async () => {
    using outbox = new Outbox(nc, undefined);
    let reply = '';
    const sub = nc.subscribe('outbox.late', {
      callback: (_err, msg) => {
        reply = msg.reply ?? '';
      },
    });
    const waiting = outbox.request('outbox.late', 'x', { timeoutMs: 2_000 });
    await nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const guessed = `${reply.slice(0, reply.lastIndexOf('.'))}.guessed`;
    nc.publish(guessed, 'forged');
    nc.publish(reply, 'real');
    expect((await waiting).string()).toBe('real');
    sub.unsubscribe();
  });

  it('once closed, rejects what waits and what is asked with unavailable, and sends anything else at once', async () => {
    const outbox = new Outbox(nc, undefined);
    const sub = nc.subscribe('outbox.closing', { callback: () => undefined });
    const waiting = rejection(() => outbox.request('outbox.closing', 'x', { timeoutMs: 5_000 }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    outbox.close();
    const err = await waiting;
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ code: 'unavailable', message: 'the hub is stopping; retry' });
    const after = await rejection(() => outbox.request('outbox.closing', 'y', { timeoutMs: 5_000 }));
    expect(after).toMatchObject({ code: 'unavailable', message: 'the hub is stopping; retry' });
    sub.unsubscribe();
    const seen: string[] = [];
    const plain = nc.subscribe('outbox.after-close', {
      callback: (_err, msg) => {
        seen.push(msg.string());
      },
    });
    outbox.send(() => nc.publish('outbox.after-close', 'z'));
    await nc.flush();
    expect(seen).toEqual(['z']);
    plain.unsubscribe();
  });
});
