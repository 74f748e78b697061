import { fnv1a32 } from '@ag2net/protocol';
import { KvWatchInclude, type KV, type KvEntry } from '@nats-io/kv';
import type { Logger } from '../base/logger.js';
import { pause } from './lease-keeper.js';
import { GONE_CONFIRM_MS, type HubPresence } from './presence.js';

/** The prefix of the hubs' presence keys in the leases bucket: `hubs.<hub_id>`. */
export const HUB_KEY_PREFIX = 'hubs.';

/** What an assignment is built from. */
export interface AssignmentOptions {
  /** The leases bucket: its TTL is the lease time, so a hub's key lapses a lease time after its last renewal. */
  readonly kv: KV;
  readonly hubId: string;
  readonly partitions: number;
  /** The lease time, ms: a hub not seen renewing its key for this long is not live. */
  readonly leaseTtlMs: number;
  /** Probes other hubs' connections (`HubPresence.probe`). */
  readonly presence: Pick<HubPresence, 'probe'>;
  readonly logger: Logger;
  /** Monotonic clock in ms; default `performance.now()`. */
  readonly now?: () => number;
}

/** What this hub knows of another. */
interface Seen {
  /** When this hub first saw it live, this time round. */
  firstSeen: number;
  /** When its key was last written, as this hub saw it. */
  lastSeen: number;
  /** Since when every probe found its connection gone; `null` while it is connected (or unknown). */
  goneSince: number | null;
}

/**
 * Which hub should own each partition: rendezvous hashing over the live hubs. Every hub writes its key
 * `hubs.<hub_id>` in the leases bucket every third of the lease time, and follows the others' keys; a hub is live while
 * its key was written within a lease time and its connection has not been seen gone for `GONE_CONFIRM_MS` (so that a
 * dead hub's partitions move in about a second, as a dead single holder's lease does). The preferred owner of
 * partition `k` is the live hub with the highest `fnv1a32(hub_id + "/" + k)` (ties by id), which every hub computes
 * alike from the same keys, and which moves only the partitions of a hub that joins or leaves.
 */
export class Assignment {
  readonly #seen = new Map<string, Seen>();
  readonly #now: () => number;
  #loop: Promise<void> | null = null;
  #watch: { stop(): void } | null = null;
  #connected = true;

  constructor(private readonly options: AssignmentOptions) {
    this.#now = options.now ?? (() => performance.now());
  }

  /** Writes this hub's key, reads the others', and keeps both up to date until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const { kv } = this.options;
    const watch = await kv.watch({ key: `${HUB_KEY_PREFIX}>`, include: KvWatchInclude.UpdatesOnly });
    this.#watch = watch;
    void (async () => {
      for await (const entry of watch as AsyncIterable<KvEntry>) this.#saw(entry);
    })().catch((err: unknown) => this.options.logger.warn({ err }, 'the watch of the hubs ended'));
    for await (const key of await kv.keys(`${HUB_KEY_PREFIX}>`)) this.#sawKey(key);
    await this.#announce();
    this.#loop = this.#run(signal);
  }

  async stop(): Promise<void> {
    this.#watch?.stop();
    await this.#loop;
    await this.options.kv.purge(`${HUB_KEY_PREFIX}${this.options.hubId}`).catch(() => undefined);
  }

  /** This hub's connection went down: nobody's probe counts until it is back. */
  disconnected(): void {
    this.#connected = false;
    for (const seen of this.#seen.values()) seen.goneSince = null;
  }

  reconnected(): void {
    this.#connected = true;
  }

  /** The live hubs, sorted; this hub always among them. */
  live(): string[] {
    const now = this.#now();
    const out = [this.options.hubId];
    for (const [id, seen] of this.#seen) {
      if (id === this.options.hubId || now - seen.lastSeen > this.options.leaseTtlMs) continue;
      if (seen.goneSince !== null && now - seen.goneSince >= GONE_CONFIRM_MS) continue;
      out.push(id);
    }
    return out.sort();
  }

  /** Whether `hubId` is live now. */
  isLive(hubId: string): boolean {
    return this.live().includes(hubId);
  }

  /** The preferred owner of partition `k` among the live hubs. */
  preferred(k: number): string {
    return preferredOwner(this.live(), k);
  }

  /** Whether this hub is partition `k`'s preferred owner. */
  prefers(k: number): boolean {
    return this.preferred(k) === this.options.hubId;
  }

  /** How long `hubId` has been live this time round, ms; 0 when it is not live. */
  liveForMs(hubId: string): number {
    if (hubId === this.options.hubId || !this.isLive(hubId)) return 0;
    const seen = this.#seen.get(hubId);
    return seen === undefined ? 0 : this.#now() - seen.firstSeen;
  }

  #saw(entry: KvEntry): void {
    if (entry.operation === 'PUT') this.#sawKey(entry.key);
    else this.#seen.delete(entry.key.slice(HUB_KEY_PREFIX.length)); // a hub that stopped purges its key
  }

  #sawKey(key: string): void {
    const id = key.slice(HUB_KEY_PREFIX.length);
    if (id === '' || id === this.options.hubId) return;
    const now = this.#now();
    const seen = this.#seen.get(id);
    const lapsed =
      seen === undefined ||
      now - seen.lastSeen > this.options.leaseTtlMs ||
      (seen.goneSince !== null && now - seen.goneSince >= GONE_CONFIRM_MS);
    if (lapsed) this.#seen.set(id, { firstSeen: now, lastSeen: now, goneSince: null });
    else seen.lastSeen = now;
  }

  async #announce(): Promise<void> {
    await this.options.kv.put(`${HUB_KEY_PREFIX}${this.options.hubId}`, JSON.stringify({ hub_id: this.options.hubId }));
  }

  /** Every third of the lease time writes this hub's key; every 250 ms probes the others' connections. */
  async #run(signal: AbortSignal): Promise<void> {
    const announceMs = Math.max(50, Math.floor(this.options.leaseTtlMs / 3));
    let lastAnnounce = this.#now();
    while (!signal.aborted) {
      await pause(PROBE_EVERY_MS, signal);
      if (signal.aborted) break;
      if (this.#now() - lastAnnounce >= announceMs) {
        try {
          await this.#announce();
          lastAnnounce = this.#now();
        } catch (err) {
          this.options.logger.warn({ err }, 'writing this hub’s presence key failed; retrying');
        }
      }
      await this.#probeOthers();
    }
  }

  async #probeOthers(): Promise<void> {
    const now = this.#now();
    const others = [...this.#seen].filter(([, seen]) => now - seen.lastSeen <= this.options.leaseTtlMs);
    await Promise.all(
      others.map(async ([id, seen]) => {
        const connected = this.#connected;
        const presence = await this.options.presence.probe(id);
        if (!connected || !this.#connected || presence !== 'gone') {
          seen.goneSince = null;
          return;
        }
        seen.goneSince ??= now;
      }),
    );
  }
}

/** How often other hubs' connections are probed, ms. */
const PROBE_EVERY_MS = 250;

/**
 * The preferred owner of partition `k` among `hubIds`: the highest `fnv1a32(hub_id + "/" + k)`, ties by the greater
 * id. Every hub computes the same from the same live set.
 */
export function preferredOwner(hubIds: readonly string[], k: number): string {
  let best = '';
  let bestScore = -1;
  for (const id of hubIds) {
    const score = fnv1a32(`${id}/${k}`);
    if (score > bestScore || (score === bestScore && id > best)) {
      best = id;
      bestScore = score;
    }
  }
  return best;
}
