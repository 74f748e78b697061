import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';

/** The current value of one key of a KV bucket. */
export interface KvValue {
  readonly key: string;
  readonly revision: number;
  readonly value: string;
}

/** Where `lastValues` reads. */
export interface KvScan {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly bucket: string;
  /** Which keys, as a subject filter (`open.>`); default every key. */
  readonly keys?: string;
}

/** How long one pull of a scan waits for messages, ms. */
const FETCH_EXPIRES_MS = 5_000;
/** How long past its expiry a pull that has not ended is stopped, ms. */
const FETCH_GRACE_MS = 1_000;

/**
 * Every key's current value in the bucket, in one pass over the bucket's stream (last message per key), skipping
 * deleted and purged keys: a streaming read instead of a list of keys and one request per key, which is what makes
 * loading ten thousand records take a fraction of a second. The consumer's pending count at creation bounds the
 * read, so it ends at once when no key matches.
 */
export async function* lastValues(scan: KvScan): AsyncGenerator<KvValue> {
  const stream = `KV_${scan.bucket}`;
  const prefix = `$KV.${scan.bucket}.`;
  const created = await scan.jsm.consumers.add(stream, {
    filter_subject: `${prefix}${scan.keys ?? '>'}`,
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.None,
    inactive_threshold: 30_000_000_000,
    mem_storage: true,
  });
  try {
    let left = created.num_pending;
    if (left === 0) return;
    const consumer = await scan.js.consumers.get(stream, created.name);
    while (left > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(left, 1000), expires: FETCH_EXPIRES_MS });
      // A pull the server lost (it was frozen, or its stream moved) is not waited on past its expiry: the read fails
      // at once and whoever scans starts again (a hub's term retries), instead of hanging for tens of seconds.
      let got = 0;
      const stalled = setTimeout(() => batch.stop(), FETCH_EXPIRES_MS + FETCH_GRACE_MS);
      try {
        for await (const m of batch) {
          got += 1;
          left = m.info.pending;
          const operation = m.headers?.get('KV-Operation') ?? '';
          if (operation === '' || operation === 'PUT') {
            yield { key: m.subject.slice(prefix.length), revision: m.seq, value: m.string() };
          }
          if (left === 0) break;
        }
      } finally {
        clearTimeout(stalled);
      }
      if (got === 0) throw new Error(`bucket ${scan.bucket}: no message where ${left} were pending`);
    }
  } finally {
    await scan.jsm.consumers.delete(stream, created.name).catch(() => undefined);
  }
}
