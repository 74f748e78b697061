/**
 * Rule globs as data: Python's `fnmatch.fnmatchcase` (`*` any run, `?` one character, `[abc]`, `[a-z]`, `[!abc]`;
 * case-sensitive; a `]` right after `[` or `[!` is a member) parsed into tokens and matched by the classic
 * two-pointer wildcard algorithm. Nothing is compiled into a RegExp, so a pattern cannot throw while matching and
 * the worst case is O(name × pattern) steps with no backtracking explosion. Characters are Unicode code points.
 */

/** Longest pattern a rule may hold, in code points. Names are at most 128; types are short. */
export const MAX_GLOB_LENGTH = 256;
/** Most patterns one rule list may hold. */
export const MAX_GLOBS_PER_LIST = 64;

/** One position of a parsed glob. */
export type GlobToken =
  | { readonly kind: 'star' }
  | { readonly kind: 'any' }
  | { readonly kind: 'char'; readonly cp: number }
  | { readonly kind: 'set'; readonly negate: boolean; readonly ranges: readonly (readonly [number, number])[] };

/** A parsed glob, or why the text is not a well-formed one. */
export type ParsedGlob =
  { readonly ok: true; readonly tokens: readonly GlobToken[] } | { readonly ok: false; readonly problem: string };

/**
 * Parses a glob. Refused (where `fnmatch` would silently guess): a `[` without its `]` (write `[[]` for a literal
 * `[`), a range whose ends are reversed (`[b-a]`), and patterns longer than `MAX_GLOB_LENGTH`.
 */
export function parseGlob(pattern: string): ParsedGlob {
  const cps = Array.from(pattern, (ch) => ch.codePointAt(0) ?? 0);
  if (cps.length > MAX_GLOB_LENGTH) {
    return { ok: false, problem: `longer than ${MAX_GLOB_LENGTH} characters` };
  }
  const tokens: GlobToken[] = [];
  for (let i = 0; i < cps.length; i += 1) {
    const cp = cps[i] ?? 0;
    if (cp === STAR) {
      // Consecutive stars match what one does; collapsing them keeps the matcher's work bounded.
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (cp === QUESTION) tokens.push({ kind: 'any' });
    else if (cp === OPEN) {
      const set = parseSet(cps, i + 1);
      if (!set.ok) return set;
      tokens.push(set.token);
      i = set.end;
    } else tokens.push({ kind: 'char', cp });
  }
  return { ok: true, tokens };
}

/** Why `pattern` is not a well-formed glob (a short, bounded message), or `null` when it is. */
export function globProblem(pattern: string): string | null {
  const parsed = parseGlob(pattern);
  return parsed.ok ? null : parsed.problem;
}

/** True when the whole of `name` matches the parsed glob. */
export function matchGlobTokens(name: string, tokens: readonly GlobToken[]): boolean {
  const text = Array.from(name, (ch) => ch.codePointAt(0) ?? 0);
  let t = 0;
  let p = 0;
  // Where the last star was and which text position it is currently taken to end at.
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const token = tokens[p];
    if (token !== undefined && token.kind === 'star') {
      starP = p;
      starT = t;
      p += 1;
    } else if (token !== undefined && matchesOne(token, text[t] ?? 0)) {
      p += 1;
      t += 1;
    } else if (starP >= 0) {
      // Let the last star take one more character and retry what follows it. Earlier stars never need to move:
      // every other token is one character wide, so the greedy-last-star choice is exact.
      starT += 1;
      t = starT;
      p = starP + 1;
    } else return false;
  }
  while (tokens[p]?.kind === 'star') p += 1;
  return p === tokens.length;
}

const STAR = 0x2a;
const QUESTION = 0x3f;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const BANG = 0x21;
const DASH = 0x2d;

function matchesOne(token: GlobToken, cp: number): boolean {
  switch (token.kind) {
    case 'any':
      return true;
    case 'char':
      return token.cp === cp;
    case 'set':
      return token.ranges.some(([lo, hi]) => lo <= cp && cp <= hi) !== token.negate;
    case 'star':
      return false;
    default: {
      const unknown: never = token;
      throw new TypeError(`unknown glob token ${String(unknown)}`);
    }
  }
}

type SetParse = { ok: true; token: GlobToken; end: number } | { ok: false; problem: string };

/** Parses the set whose body starts at `start` (just after `[`); `end` is the index of its `]`. */
function parseSet(cps: readonly number[], start: number): SetParse {
  let j = start;
  const negate = cps[j] === BANG;
  if (negate) j += 1;
  const bodyStart = j;
  // fnmatch: a `]` first in the set is a member, not its end.
  if (cps[j] === CLOSE) j += 1;
  while (j < cps.length && cps[j] !== CLOSE) j += 1;
  if (j >= cps.length) {
    return { ok: false, problem: `unclosed '[' at position ${start - 1} (write '[[]' for a literal '[')` };
  }
  const body = cps.slice(bodyStart, j);
  const ranges: [number, number][] = [];
  for (let k = 0; k < body.length; k += 1) {
    const lo = body[k] ?? 0;
    const hi = body[k + 2];
    if (body[k + 1] === DASH && hi !== undefined) {
      if (hi < lo) {
        return {
          ok: false,
          problem: `reversed range '${String.fromCodePoint(lo)}-${String.fromCodePoint(hi)}' in a set`,
        };
      }
      ranges.push([lo, hi]);
      k += 2;
    } else ranges.push([lo, lo]);
  }
  return { ok: true, token: { kind: 'set', negate, ranges }, end: j };
}
