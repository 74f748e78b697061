import { monotonicFactory } from 'ulid';
import { z } from 'zod';

/**
 * An identifier of an agent, channel, envelope or task. Ids travel inside NATS subjects, so they are limited to
 * subject-token-safe characters: letters, digits, `_` and `-`, at most 128 of them. The hub mints ULIDs
 * (26 characters of Crockford base32); ids written by AG2 (32 hex digits) and hand-picked ids such as `"c1"` fit too.
 */
export const IdSchema = z
  .string()
  .min(1, 'id must not be empty')
  .max(128, 'id must be at most 128 characters')
  .regex(/^[A-Za-z0-9_-]+$/, 'id may hold only letters, digits, "_" and "-"');
export type Id = z.infer<typeof IdSchema>;

/** Mints ids whose lexicographic order is their mint order, also within one millisecond. */
export type IdFactory = (nowMs?: number) => string;

/** A fresh monotonic ULID factory. Each hub owns one, so envelope ids sort in admission order. */
export function createIdFactory(): IdFactory {
  const next = monotonicFactory();
  return (nowMs?: number) => next(nowMs);
}

let shared: IdFactory | undefined;

/** A monotonic ULID from a process-wide factory, for ids minted outside a hub (agents, tasks, tests). */
export function newId(): string {
  shared ??= createIdFactory();
  return shared();
}

/** True when `value` is a well-formed id. */
export function isId(value: string): boolean {
  return IdSchema.safeParse(value).success;
}

/**
 * Splits a `hub://<hub>/<agent>` address into its hub and agent parts. Anything else, including malformed
 * URNs (`hub://only`, `hub:///a`, `hub://h/`, `""`), is a local id: `[null, value]`.
 */
export function parseHubUrn(value: string): readonly [hub: string | null, agent: string] {
  const match = /^hub:\/\/([^/]+)\/(.+)$/.exec(value);
  if (match?.[1] === undefined || match[2] === undefined) return [null, value];
  return [match[1], match[2]];
}
