/**
 * True when the JSON text nests arrays and objects deeper than `maxDepth`. A single pass over the characters
 * that skips string literals, without parsing: it runs before `JSON.parse`, so that deeply nested input never
 * reaches code that recurses over it (zod, `JSON.stringify`, `repr`). Text that is not JSON gives some answer
 * and then fails to parse.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
