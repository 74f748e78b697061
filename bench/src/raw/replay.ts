import { EnvelopeSchema } from '@ag2net/protocol';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';

/** How `replayStream` decodes each message. */
export type ReplayDecode = 'none' | 'json' | 'schema';

/**
 * Replays a whole stream with an ordered consumer, with the consume settings the hub's WAL reader uses
 * (`max_messages: 1000`, stop when nothing is pending). `none` only touches each message's bytes (the baseline);
 * `json` and `schema` add what the hub's WAL reader does per message, to show what decoding costs on its own.
 */
export async function replayStream(
  nc: NatsConnection,
  stream: string,
  decode: ReplayDecode = 'none',
): Promise<{ messages: number; seconds: number }> {
  const jsm = await jetstreamManager(nc);
  const expected = (await jsm.streams.info(stream)).state.messages;
  const started = performance.now();
  const consumer = await jetstream(nc).consumers.get(stream);
  const messages = await consumer.consume({ max_messages: 1000 });
  let count = 0;
  let bytes = 0;
  try {
    if (expected > 0) {
      for await (const m of messages) {
        count += 1;
        bytes += m.data.length;
        if (decode === 'json') JSON.parse(m.string());
        else if (decode === 'schema') EnvelopeSchema.parse(JSON.parse(m.string()));
        if (m.info.pending === 0) break;
      }
    }
  } finally {
    messages.stop();
    await consumer.delete().catch(() => undefined);
  }
  const seconds = (performance.now() - started) / 1000;
  if (count !== expected) throw new Error(`replayed ${count} messages of ${expected} (${bytes} bytes)`);
  return { messages: count, seconds };
}

/** Reads every key of a KV bucket with one `get` each, in sequence, as the hub's hydrate loads channel metadata. */
export async function loadBucket(nc: NatsConnection, bucket: string): Promise<{ keys: number; seconds: number }> {
  const kv = await new Kvm(nc).open(bucket);
  const started = performance.now();
  let keys = 0;
  for await (const key of await kv.keys()) {
    const entry = await kv.get(key);
    if (entry !== null) {
      JSON.parse(entry.string());
      keys += 1;
    }
  }
  return { keys, seconds: (performance.now() - started) / 1000 };
}
