import { DeliverPolicy, type JetStreamClient } from '@nats-io/jetstream';

/** The current value of one key of a KV bucket. */
export interface KvValue {
  readonly key: string;
  readonly revision: number;
  readonly value: string;
}

/**
 * Every key's current value in the bucket, in one ordered pass over the bucket's stream (last message per key),
 * skipping deleted and purged keys; `keys` filters them like a subject (`open.>`): a streaming read instead of a list of keys and one request per key, which is
 * what makes loading ten thousand records take a fraction of a second. Yields nothing for an empty bucket.
 */
export async function* lastValues(js: JetStreamClient, bucket: string, keys = '>'): AsyncGenerator<KvValue> {
  const stream = `KV_${bucket}`;
  const prefix = `$KV.${bucket}.`;
  const info = await (await js.streams.get(stream)).info(false);
  if (info.state.messages === 0) return;
  const consumer = await js.consumers.get(stream, {
    filter_subjects: `${prefix}${keys}`,
    deliver_policy: DeliverPolicy.LastPerSubject,
  });
  const messages = await consumer.consume({ max_messages: 1000 });
  try {
    for await (const m of messages) {
      const operation = m.headers?.get('KV-Operation') ?? '';
      if (operation === '' || operation === 'PUT') {
        yield { key: m.subject.slice(prefix.length), revision: m.seq, value: m.string() };
      }
      if (m.info.pending === 0) break;
    }
  } finally {
    messages.stop();
    await consumer.delete().catch(() => undefined);
  }
}
