import type { JetStreamManager } from '@nats-io/jetstream';
import { readLeaseValue } from './lease-record.js';

/** The header that makes a message on a KV subject a marker (nats.js `kvOperationHdr`). */
export const KV_OPERATION_HEADER = 'KV-Operation';

/**
 * How many revisions between two that a standby saw it reads one by one to tell that none of them was a hub's write
 * (see `Lease.tryAcquire`); a wider gap counts as one that may hide a hub's write.
 */
const MAX_GAP_READS = 8;

/**
 * A standby's wait through foreign values at the lease key (values no hub wrote): since when (`now()` after the read
 * that first showed one) it has seen nothing but foreign values there, and the last revision it saw. The lease is free
 * once that has lasted a whole lease time with no revision in between that may have been a hub's write.
 */
export class ForeignWait {
  #since: { at: number; revision: number } | null = null;

  constructor(
    private readonly jsm: JetStreamManager,
    /** The lease bucket's stream (`KV_<bucket>`). */
    private readonly stream: string,
    /** The lease key's subject. */
    private readonly keySubject: string,
  ) {}

  /** The key last held something other than a foreign value: the wait starts over at the next one. */
  reset(): void {
    this.#since = null;
  }

  /**
   * Whether this standby has now seen nothing but foreign values at the key for a whole lease time, given the foreign
   * value at `revision` it read at `seenAt`; starts or restarts the wait otherwise.
   */
  async wholeLease(revision: number, seenAt: number, ttlMs: number): Promise<boolean> {
    const since = this.#since;
    if (since === null || revision < since.revision || !(await this.#onlyForeignBetween(since.revision, revision))) {
      this.#since = { at: seenAt, revision };
      return false;
    }
    since.revision = revision;
    return ttlMs > 0 && seenAt - since.at >= ttlMs;
  }

  /**
   * True when no revision strictly between `from` and `to` (both foreign values this standby read) can have been a
   * hub's write at the key: each is still there and is another key's message or a foreign value. A revision that is
   * gone was overwritten (the bucket keeps one value per key) or expired, and may have been a holder's record; a gap
   * wider than `MAX_GAP_READS` is not read and counts the same.
   */
  async #onlyForeignBetween(from: number, to: number): Promise<boolean> {
    if (to - from - 1 > MAX_GAP_READS) return false;
    for (let seq = from + 1; seq < to; seq += 1) {
      const msg = await this.jsm.streams.getMessage(this.stream, { seq });
      if (msg === null) return false;
      if (msg.subject !== this.keySubject) continue;
      const operation = msg.header.get(KV_OPERATION_HEADER) || 'PUT';
      if (readLeaseValue({ operation, string: () => msg.string() }).kind !== 'foreign') return false;
    }
    return true;
  }
}
