import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AuditKind, CloseReason, TaskEndReason, ViolationHandlerName } from '@ag2net/protocol';

const DOCS = fileURLToPath(new URL('../../../docs/', import.meta.url));

/** The backquoted words of the paragraph of `file` that starts with `opening`. */
function quotedIn(file: string, opening: string): string[] {
  const text = readFileSync(`${DOCS}${file}`, 'utf8');
  const start = text.indexOf(opening);
  expect(start, `${file} has a paragraph opening ${opening}`).toBeGreaterThanOrEqual(0);
  const paragraph = text.slice(start, text.indexOf('\n\n', start));
  return [...paragraph.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
}

/** The first backquoted cell of each body row of the table that follows `heading` in `file`. */
function tableKeys(file: string, heading: string): string[] {
  const text = readFileSync(`${DOCS}${file}`, 'utf8');
  const start = text.indexOf(heading);
  expect(start, `${file} has ${heading}`).toBeGreaterThanOrEqual(0);
  const rows =
    text
      .slice(start)
      .split('\n\n')
      .find((block) => block.startsWith('|')) ?? '';
  return rows
    .split('\n')
    .slice(2) // the header and its rule
    .map((row) => /^\| `([^`]+)`/.exec(row)?.[1])
    .filter((key): key is string => key !== undefined);
}

describe('the documented wire vocabulary', () => {
  it('docs/protocol.md lists every close reason and task-end reason', () => {
    const listed = new Set(quotedIn('protocol.md', '**Close reasons**'));
    const missing = [...Object.values(CloseReason), ...Object.values(TaskEndReason)].filter((r) => !listed.has(r));
    expect(missing).toEqual([]);
  });

  it('docs/governance.md has a row for every built-in handler and audit kind', () => {
    expect(new Set(tableKeys('governance.md', '### Handlers'))).toEqual(new Set(Object.values(ViolationHandlerName)));
    expect(new Set(tableKeys('governance.md', '## Audit\n'))).toEqual(new Set(Object.values(AuditKind)));
  });
});
