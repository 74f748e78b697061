/**
 * Python's `fnmatch.fnmatchcase`: `*` any run, `?` one character, `[abc]` / `[!abc]` a set; case-sensitive.
 * Rules use these globs over passport names.
 */
export function globMatch(name: string, pattern: string): boolean {
  return globToRegExp(pattern).test(name);
}

/** True when `name` matches any of `patterns`. */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globMatch(name, p));
}

const cache = new Map<string, RegExp>();

function globToRegExp(pattern: string): RegExp {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern.charAt(i);
    if (ch === '*') out += '.*';
    else if (ch === '?') out += '.';
    else if (ch === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) out += '\\[';
      else {
        let body = pattern.slice(i + 1, end).replaceAll('\\', '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        out += `[${body}]`;
        i = end;
      }
    } else out += ch.replace(/[.+^${}()|\\/-]/g, '\\$&');
  }
  const re = new RegExp(`^${out}$`, 's');
  if (cache.size < 1024) cache.set(pattern, re);
  return re;
}
