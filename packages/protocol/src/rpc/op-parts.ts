import { z } from 'zod';

// What the operation tables (ops.ts, task-ops.ts) share: request size limits and the paging schemas.

/** The largest request most operations take, in bytes of JSON: 64 KiB. */
export const DEFAULT_MAX_REQUEST_BYTES = 64 * 1024;
/** The largest request of operations that carry documents (passport and resume, rule, skill, task state): 256 KiB. */
export const LARGE_REQUEST_BYTES = 256 * 1024;
/**
 * The largest envelope `post` takes, in bytes of JSON: 256 KiB. The hub adds its stamp (sequence, creation time)
 * and WAL headers, a few hundred bytes, so a stamped envelope fits NATS's `max_payload` (1 MiB by default) with
 * room to spare; JSON re-encoding never makes an envelope larger than the request that carried it.
 */
export const MAX_ENVELOPE_BYTES = 256 * 1024;
/** How deeply a request's JSON may nest arrays and objects; deeper is refused before it is parsed. */
export const MAX_REQUEST_DEPTH = 64;
/** The most bytes of items one page of a list operation holds before it stops and hands out a cursor: 512 KiB. */
export const LIST_PAGE_BYTES = 512 * 1024;
/** The longest name, query or filter string a request may hold. */
const MAX_QUERY_CHARS = 256;

export const Empty = z.strictObject({});
export const Limit = z.number().int().min(1).max(1000).default(50);
/**
 * Where a list continues: the `next_cursor` of the previous page, or `null` for the first page. Opaque to
 * clients; valid for the same filter only.
 */
export const Cursor = z.string().max(64).nullable().default(null);
/** The cursor of the page after this one, or `null` when this page is the last. */
export const NextCursor = z.string().nullable();
export const Query = z.string().max(MAX_QUERY_CHARS);
