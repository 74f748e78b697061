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
 * dead hub's partitions move in about a second, as a dead single holder's lease does). The preferred owners are
 * rendezvous hashing capped to a fair share (`balancedOwners`), which every hub computes alike from the same keys.
 */
export class Assignment {
  readonly #seen = new Map<string, Seen>();
  readonly #now: () => number;
  #loop: Promise<void> | null = null;
  #watching: Promise<void> | null = null;
  #watch: { stop(): void } | null = null;
  readonly #stop = new AbortController();
  #connected = true;

  constructor(private readonly options: AssignmentOptions) {
    this.#now = options.now ?? (() => performance.now());
  }

  /** Writes this hub's key, reads the others', and keeps both up to date until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.#stop.abort(), { once: true });
    const watching = await this.#watchHubs();
    this.#watching = this.#keepWatching(watching);
    await this.#announce();
    this.#loop = this.#run(this.#stop.signal);
  }

  /**
   * Leaves: stops writing this hub's key and removes it, so that the other hubs stop counting this one live at once
   * and campaign for its partitions, which they take as soon as this hub releases each (a graceful stop's hand-over).
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#watch?.stop();
    await this.#loop;
    await this.#watching;
    await this.options.kv.purge(`${HUB_KEY_PREFIX}${this.options.hubId}`).catch(() => undefined);
  }

  /** Starts a watch of the hubs' keys, then reads the keys there are. */
  async #watchHubs(): Promise<{ stop(): void } & AsyncIterable<KvEntry>> {
    const { kv } = this.options;
    const watch = await kv.watch({ key: `${HUB_KEY_PREFIX}>`, include: KvWatchInclude.UpdatesOnly });
    this.#watch = watch;
    for await (const key of await kv.keys(`${HUB_KEY_PREFIX}>`)) this.#sawKey(key);
    return watch as { stop(): void } & AsyncIterable<KvEntry>;
  }

  /** Follows the hubs' keys until `stop()`; a watch that ends on its own is started again after a pause. */
  async #keepWatching(first: AsyncIterable<KvEntry>): Promise<void> {
    let watch = first;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      for await (const entry of watch) this.#saw(entry);
      if (signal.aborted) break;
      this.options.logger.warn({}, 'the watch of the hubs ended; watching again');
      await pause(PROBE_EVERY_MS * 4, signal);
      try {
        watch = await this.#watchHubs();
      } catch (err) {
        this.options.logger.warn({ err }, 'watching the hubs again failed; retrying');
      }
    }
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

  /**
   * Whether `hubId`'s connection has been seen gone for `GONE_CONFIRM_MS`, by every probe, while this hub's own
   * connection stayed up: the only sign that lets a partition's lease be taken over before it expires. A hub that
   * merely stopped writing its key (paused) is not live, but its leases are waited out: it may wake up still holding
   * them by its own clock.
   */
  connectionGone(hubId: string): boolean {
    const seen = this.#seen.get(hubId);
    return seen?.goneSince !== null && seen?.goneSince !== undefined && this.#now() - seen.goneSince >= GONE_CONFIRM_MS;
  }

  /** Whether `hubId` is live now. */
  isLive(hubId: string): boolean {
    return this.live().includes(hubId);
  }

  /** The preferred owner of partition `k` among the live hubs. */
  preferred(k: number): string {
    const live = this.live();
    const key = live.join(' ');
    if (this.#owners?.key !== key) this.#owners = { key, owners: balancedOwners(live, this.options.partitions) };
    return this.#owners.owners[k] ?? '';
  }

  /** The owners last computed, and the live set they are for. */
  #owners: { readonly key: string; readonly owners: readonly string[] } | null = null;

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
 * The preferred owner of every partition among `hubIds`, balanced: each hub owns `floor(P/n)` or `ceil(P/n)` of the
 * `P` partitions. Rendezvous hashing capped to a fair share: every (hub, partition) pair is scored
 * `mix32(fnv1a32(hub_id + "/" + k))`, and the pairs are taken from the highest score down (ties by the greater id),
 * each partition going to the first hub with room left, first up to `floor(P/n)` each, then the remainder. Every hub
 * computes the same from the same live set; a hub that joins takes the partitions it scores highest on, and the cap
 * moves a few more between the others (measured: 5.1 partitions on average for a fourth hub joining three with 16).
 */
export function balancedOwners(hubIds: readonly string[], partitions: number): string[] {
  const n = hubIds.length;
  if (n === 0) return [];
  const floor = Math.floor(partitions / n);
  let ceilingsLeft = partitions % n;
  const pairs: { readonly id: string; readonly k: number; readonly score: number }[] = [];
  for (const id of hubIds) for (let k = 0; k < partitions; k += 1) pairs.push({ id, k, score: score(id, k) });
  pairs.sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : a.k - b.k));
  const owners = new Array<string>(partitions).fill('');
  const counts = new Map<string, number>();
  for (const remainder of [false, true]) {
    for (const { id, k } of pairs) {
      if (owners[k] !== '') continue;
      const count = counts.get(id) ?? 0;
      const room = count < floor || (remainder && count === floor && ceilingsLeft > 0);
      if (!room) continue;
      if (count === floor) ceilingsLeft -= 1;
      owners[k] = id;
      counts.set(id, count + 1);
    }
  }
  return owners;
}

/** A hub's rendezvous score for partition `k`. */
function score(hubId: string, k: number): number {
  return mix32(fnv1a32(`${hubId}/${k}`));
}

/**
 * MurmurHash3's 32-bit finalizer: spreads every input bit over the whole word. FNV-1a alone barely separates ids that
 * differ in one early character (`hub-a/3` and `hub-b/3` keep their order for every partition), which would give one
 * hub every partition.
 */
export function mix32(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b) >>> 0;
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35) >>> 0;
  x ^= x >>> 16;
  return x >>> 0;
}
