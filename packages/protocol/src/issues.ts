import type { z } from 'zod';
import { repr } from './repr.js';

/** How many validation issues a formatted message lists before it says "and N more". */
export const MAX_LISTED_ISSUES = 5;
/** The most characters a formatted validation message holds. */
export const MAX_ISSUES_MESSAGE_CHARS = 1024;
/** The most characters of one issue's message (room for a message that quotes a bounded `repr`). */
const MAX_ISSUE_PART_CHARS = 400;
/** The most characters of one issue's path. */
const MAX_PATH_CHARS = 160;

/** How `formatIssues` writes its message. */
export interface FormatIssuesOptions {
  /**
   * `line` (default): `<prefix>: <issue>; <issue>` on one line, for wire errors and logs. `list`: `<prefix>:` and
   * then each issue on its own line indented by two spaces, for messages a person reads in a terminal.
   */
  readonly layout?: 'line' | 'list';
  /**
   * How one issue's path is named, e.g. a config key as its command-line flag. Default: the keys joined with `.`,
   * odd keys through `repr`, `(root)` for the top level. The result is cut to a few hundred characters.
   */
  readonly describePath?: (path: readonly PropertyKey[]) => string;
}

/**
 * One short, bounded message for a failed validation: `<prefix>: <path>: <message>; …; and N more`. At most
 * `MAX_LISTED_ISSUES` issues are listed, each path and message is cut to a few hundred characters, and the whole
 * message to `MAX_ISSUES_MESSAGE_CHARS`, whatever the input held: a request with ten thousand bad elements or a
 * 250,000-character key gets a message of the same size as one with a single typo. Every zod failure the project
 * reports, on the wire, in the audit trail or in a CLI, is written by this function.
 */
export function formatIssues(
  prefix: string,
  issues: readonly z.core.$ZodIssue[],
  options: FormatIssuesOptions = {},
): string {
  const describe = options.describePath ?? formatPath;
  const listed = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((i) => `${clip(describe(i.path), MAX_PATH_CHARS)}: ${clip(i.message)}`);
  const more = issues.length - listed.length;
  if (more > 0) listed.push(`and ${more} more`);
  const text = options.layout === 'list' ? `${prefix}:\n  ${listed.join('\n  ')}` : `${prefix}: ${listed.join('; ')}`;
  return clip(text, MAX_ISSUES_MESSAGE_CHARS);
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  const parts = path.map(safeKey);
  return clip(parts.join('.'), MAX_PATH_CHARS);
}

/** A path key as written: plain keys as they are, anything odd (dots, controls, huge) through `repr`. */
function safeKey(key: PropertyKey): string {
  if (typeof key === 'number') return String(key);
  const text = typeof key === 'symbol' ? key.toString() : key;
  return /^[\w-]{1,64}$/.test(text) ? text : repr(text, { maxChars: 40 });
}

/** `text` cut to `max` characters, ending in `…` when it was longer. */
export function clip(text: string, max: number = MAX_ISSUE_PART_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
