import { partitionRuns, type Health } from '@ag2net/protocol';

/** How often the service looks at which partitions its hub holds, ms. */
export const HOLDINGS_EVERY_MS = 500;

/** The partitions a hub holds, ascending, with the epoch of each, out of the deployment's count. */
export interface Holdings {
  readonly partitions: readonly number[];
  /** `epochs[i]` is the lease epoch of `partitions[i]`. */
  readonly epochs: readonly number[];
  /** The deployment's partition count. */
  readonly of: number;
}

/** What `health` says the hub holds. */
export function holdingsOf(health: Pick<Health, 'partitions' | 'held'>): Holdings {
  const held = [...health.held].sort((a, b) => a.partition - b.partition);
  return { partitions: held.map((h) => h.partition), epochs: held.map((h) => h.epoch), of: health.partitions };
}

/** Partitions as runs, `0-3, 6` (`none` for no partition). */
export function partitionRanges(partitions: readonly number[]): string {
  return partitionRuns(partitions).join(', ') || 'none';
}

/**
 * Logs what the hub serves whenever that changes: `serving` with the partitions it holds (and their epochs) once it
 * holds any and after every change, `serving no partition` when it holds none any more. With several partitions a
 * hub gains and loses them as other hubs join and leave, so this follows the hub for its whole life. Stops at `stop()`.
 */
export function watchHoldings(options: {
  readonly hub: { readonly hubId: string; health(): Pick<Health, 'partitions' | 'held'> };
  readonly log: { info(fields: object, msg: string): void };
  readonly everyMs?: number;
}): { stop(): void } {
  const { hub, log } = options;
  let last = '';
  const look = (): void => {
    const now = holdingsOf(hub.health());
    const key = now.partitions.map((k, i) => `${k}@${now.epochs[i] ?? 0}`).join(' ');
    if (key === last) return;
    const hadAny = last !== '';
    last = key;
    if (now.partitions.length > 0) {
      log.info({ hubId: hub.hubId, partitions: now.partitions, epochs: now.epochs, of: now.of }, 'serving');
    } else if (hadAny) {
      log.info({ hubId: hub.hubId, of: now.of }, 'serving no partition');
    }
  };
  look();
  const timer = setInterval(look, options.everyMs ?? HOLDINGS_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
