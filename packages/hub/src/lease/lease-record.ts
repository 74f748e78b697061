import { z } from 'zod';
import { parseJson } from '../base/parse-json.js';

/**
 * A hub id standing alone, which is what a holding hub writes at the lease key when its id has this form (the default
 * ULID, hub-service's `--hub-id`): the value every hub has always written there, so that hubs of different versions
 * read each other's lease during a rolling upgrade.
 */
const PLAIN_HUB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The JSON form of a hub's lease record: the value of a holding hub whose id is not plain (`held`), and the payload of
 * the delete marker a hub releases the lease with (`released`). Strict, so that no other JSON (a JetStream API
 * answer, an RPC reply a confused deputy sent to the key's subject) passes.
 */
const LeaseRecordSchema = z.strictObject({
  hub_id: z.string().min(1).max(256),
  state: z.enum(['held', 'released']),
});

/** The `KV-Operation` of a delete marker: how a hub releases the lease (see `Lease.release`). */
export const RELEASE_OPERATION = 'DEL';

/** What is at the lease key, as a hub reads it. */
export type LeaseValue =
  /** No value (never written, expired, or purged): free. */
  | { readonly kind: 'absent' }
  /** A hub's record: that hub holds the lease. */
  | { readonly kind: 'held'; readonly hubId: string }
  /** A hub's release: free, to be taken by a CAS write on its revision. */
  | { readonly kind: 'released'; readonly hubId: string }
  /** Anything else: a value or marker no hub wrote. Nobody's lease, and never free at once. */
  | { readonly kind: 'foreign' };

/** What the lease needs of a stored value at its key: a KV entry, or a message of the bucket's stream. */
export interface StoredLeaseValue {
  /** `PUT` for a value; `DEL` or `PURGE` for a marker. */
  readonly operation: string;
  string(): string;
}

/**
 * Reads the value at the lease key; never throws. A hub's value is its plain id or its `held` record; a hub's release
 * is a delete marker carrying its `released` record (which hubs of older versions, and `kv.create`, also take as
 * free). Any other value or marker is foreign.
 */
export function readLeaseValue(stored: StoredLeaseValue | null): LeaseValue {
  if (stored === null) return { kind: 'absent' };
  const text = stored.string();
  if (stored.operation === 'PUT' && PLAIN_HUB_ID.test(text)) return { kind: 'held', hubId: text };
  const parsed = parseJson(text, LeaseRecordSchema);
  if (!parsed.ok) return { kind: 'foreign' };
  const { hub_id: hubId, state } = parsed.value;
  if (stored.operation === 'PUT' && state === 'held') return { kind: 'held', hubId };
  if (stored.operation === RELEASE_OPERATION && state === 'released') return { kind: 'released', hubId };
  return { kind: 'foreign' };
}

/** What `hubId` writes at the key while it holds the lease: its id, in JSON only when the id is not plain. */
export function heldValue(hubId: string): string {
  return PLAIN_HUB_ID.test(hubId) ? hubId : JSON.stringify({ hub_id: hubId, state: 'held' });
}

/** The payload of the delete marker with which `hubId` releases the lease. */
export function releasedValue(hubId: string): string {
  return JSON.stringify({ hub_id: hubId, state: 'released' });
}

/** Another hub's record at the lease key, as a standby read it. */
export interface ObservedHolder {
  readonly hubId: string;
  /** The key's revision holding that record. */
  readonly revision: number;
}
