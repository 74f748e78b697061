import { LIST_PAGE_BYTES } from '@ag2net/protocol/internal';
import { InvalidRequestError } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';

/** NATS's default `max_payload`, used while the connection has not reported its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** One page of a list and where the next one starts. */
export interface Page<T> {
  readonly items: T[];
  /** The cursor of the next page; `null` when this page holds the last item. */
  readonly next_cursor: string | null;
}

/** Options of `pageOf`. */
export interface PageOptions {
  /** The `cursor` of the request: `null` for the first page. */
  readonly cursor: string | null;
  /** The most items on the page. */
  readonly limit: number;
  /** The most bytes of JSON the items may take (default `LIST_PAGE_BYTES`); a page always holds one item at least. */
  readonly budgetBytes?: number;
}

/**
 * One page of `items` (the whole filtered list, in its stable order) from the position `cursor` names, stopping
 * at `limit` items or at the byte budget, whichever comes first. The cursor is the offset of the next item,
 * written in decimal: pages stay consistent while the list only grows at its end (registration and creation
 * order), which is how the hub's lists grow.
 */
export function pageOf<T>(items: readonly T[], options: PageOptions): Page<T> {
  const start = offsetOf(options.cursor);
  const budget = options.budgetBytes ?? LIST_PAGE_BYTES;
  const out: T[] = [];
  let bytes = 0;
  let next = start;
  for (const item of items.slice(start, start + options.limit)) {
    const size = jsonBytes(item);
    if (out.length > 0 && bytes + size > budget) break;
    bytes += size;
    out.push(item);
    next++;
  }
  return { items: out, next_cursor: next < items.length ? String(next) : null };
}

/** Room a reply needs beside its items: the `{ ok, result }` wrapper, `next_cursor` and other fields. */
const REPLY_OVERHEAD_BYTES = 16 * 1024;

/**
 * The byte budget of one page on this connection: `LIST_PAGE_BYTES`, or less when the server's `max_payload` is
 * smaller than a page and its reply would not fit.
 */
export function pageBudget(nc: Pick<NatsConnection, 'info'>): number {
  const maxPayload = nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  return Math.max(1, Math.min(LIST_PAGE_BYTES, maxPayload - REPLY_OVERHEAD_BYTES));
}

/** How many bytes `value` takes as JSON (the separator between items included). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null') + 1;
}

function offsetOf(cursor: string | null): number {
  if (cursor === null) return 0;
  if (!/^\d{1,15}$/.test(cursor)) throw new InvalidRequestError('cursor is not one this hub handed out');
  return Number.parseInt(cursor, 10);
}
