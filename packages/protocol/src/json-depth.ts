/**
 * True when the JSON text nests arrays and objects deeper than `maxDepth`. A single pass over the characters
 * that skips string literals, without parsing: it runs before `JSON.parse`, so that deeply nested input never
 * reaches code that recurses over it (zod, `JSON.stringify`, `repr`). Text that is not JSON gives some answer
 * and then fails to parse. A string literal is skipped in one jump to its closing quote (`indexOf`, the first quote
 * not escaped by an odd run of backslashes), not character by character: most of a request is text.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      if (end === -1) return false;
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the quote that closes the string literal opened at `open`, or -1 when it is never closed. */
function closingQuote(text: string, open: number): number {
  for (let from = open + 1; ;) {
    const q = text.indexOf('"', from);
    if (q === -1) return -1;
    let backslashes = 0;
    while (q - backslashes - 1 > open && text.charCodeAt(q - backslashes - 1) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
    from = q + 1;
  }
}
