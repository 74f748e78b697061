import { parseGlob, matchGlobTokens, type GlobToken } from '@ag2net/protocol/internal';

/**
 * Python's `fnmatch.fnmatchcase` over passport names and channel types: `*` any run, `?` one character, `[abc]` /
 * `[!abc]` / `[a-z]` a set; case-sensitive. Patterns are data: parsed once into tokens and matched in
 * O(name × pattern) steps without a RegExp, so no pattern can throw or stall the event loop. Rules are validated
 * when they are set; a malformed pattern stored before that (e.g. `[b-a]`) matches nothing and is reported once.
 */
export function globMatch(name: string, pattern: string): boolean {
  const tokens = compile(pattern);
  return tokens !== null && matchGlobTokens(name, tokens);
}

/** True when `name` matches any of `patterns`. */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globMatch(name, p));
}

/** Told once per process about each malformed pattern met while matching. */
export type BadGlobListener = (pattern: string, problem: string) => void;

const listeners = new Set<BadGlobListener>();
/** Parsed patterns (`null`: malformed), bounded so that a stream of distinct patterns cannot grow it without end. */
const cache = new Map<string, readonly GlobToken[] | null>();
const CACHE_LIMIT = 4096;
const reported = new Set<string>();

/** Subscribes to malformed-pattern reports (the hub logs them); returns the unsubscribe. */
export function onBadGlob(listener: BadGlobListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function compile(pattern: string): readonly GlobToken[] | null {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  const parsed = parseGlob(pattern);
  const tokens = parsed.ok ? parsed.tokens : null;
  if (!parsed.ok && !reported.has(pattern) && reported.size < CACHE_LIMIT) {
    reported.add(pattern);
    for (const listener of listeners) listener(pattern.slice(0, 64), parsed.problem);
  }
  if (cache.size < CACHE_LIMIT) cache.set(pattern, tokens);
  return tokens;
}
