import { matchGlobTokens, parseGlob } from '@ag2net/protocol/internal';
import type { Rule } from '@ag2net/protocol';

/**
 * Python's `fnmatch.fnmatchcase` over passport names and channel types: `*` any run, `?` one character, `[abc]` /
 * `[!abc]` / `[a-z]` a set; case-sensitive. Patterns are data: parsed and matched in O(name × pattern) steps without a
 * RegExp, so no pattern can throw or stall the event loop. Stateless: a pattern is parsed at each match (at most 256
 * characters, a few per rule), so nothing is cached or shared between hubs. Rules are validated when they are set; a
 * malformed pattern stored before that (e.g. `[b-a]`) matches nothing, and the hub reports it when it loads the rule
 * (`malformedGlobs`).
 */
export function globMatch(name: string, pattern: string): boolean {
  // The default rule's pattern, matched on every post: `*` matches every name, the empty one too.
  if (pattern === '*') return true;
  const parsed = parseGlob(pattern);
  return parsed.ok && matchGlobTokens(name, parsed.tokens);
}

/** True when `name` matches any of `patterns`. */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globMatch(name, p));
}

/** A pattern of a rule that is not a well-formed glob, and what is wrong with it. */
export interface MalformedGlob {
  readonly pattern: string;
  readonly problem: string;
}

/** The malformed patterns of a rule's glob lists (`access`: inbound, outbound, channel types), each once. */
export function malformedGlobs(rule: Pick<Rule, 'access'>): MalformedGlob[] {
  const { inbound_from, outbound_to, channel_types } = rule.access;
  const patterns = new Set([...inbound_from, ...outbound_to, ...channel_types.initiate, ...channel_types.accept]);
  return [...patterns].flatMap((pattern) => {
    const parsed = parseGlob(pattern);
    return parsed.ok ? [] : [{ pattern: pattern.slice(0, 64), problem: parsed.problem }];
  });
}
