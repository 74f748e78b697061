import { HealthSchema, RpcReplySchema, newId, type Health, type HubNames } from '@ag2net/protocol';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** Who holds each partition's lease key now (`null`: nobody). Hub ids in these tests are plain: the value is the id. */
export async function leaseHolders(kv: KV, names: HubNames): Promise<(string | null)[]> {
  return Promise.all(
    Array.from({ length: names.partitions }, async (_, k) => {
      const entry = await kv.get(names.leaseKey(k));
      return entry !== null && entry.operation === 'PUT' ? entry.string() : null;
    }),
  );
}

/** Every hub that answers the roster within `maxWaitMs` (default 400), by id. */
export async function rosterOf(nc: NatsConnection, names: HubNames, maxWaitMs = 400): Promise<Map<string, Health>> {
  const out = new Map<string, Health>();
  const replies = await nc.requestMany(names.hubsPing, '{}', { strategy: 'timer', maxWait: maxWaitMs }).catch(() => []);
  for await (const msg of replies) {
    const reply = RpcReplySchema.safeParse(msg.json());
    if (!reply.success || !reply.data.ok) continue;
    const health = HealthSchema.safeParse(reply.data.result);
    if (health.success) out.set(health.data.hub_id, health.data);
  }
  return out;
}

/** `perPartition` fresh channel ids in each of the `partitions` partitions, in the order they were minted. */
export function channelIdsPerPartition(
  partitionOf: (channelId: string) => number,
  partitions: number,
  perPartition: number,
): string[] {
  const ids: string[] = [];
  const counts = new Map<number, number>();
  while (ids.length < partitions * perPartition) {
    const id = newId();
    const k = partitionOf(id);
    if ((counts.get(k) ?? 0) >= perPartition) continue;
    counts.set(k, (counts.get(k) ?? 0) + 1);
    ids.push(id);
  }
  return ids;
}
