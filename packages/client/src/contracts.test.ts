import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('client module graph', () => {
  it('has no import cycle, type-only imports counted', { timeout: 60_000 }, async () => {
    // The repository's own lint config, narrowed to the rule that counts type imports in cycles.
    const eslint = new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => ruleId === 'ag2net/no-import-cycle' });
    const results = await eslint.lintFiles(['packages/client/src/*.ts']);
    const cycles = results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.message}`));
    expect(cycles).toEqual([]);
    expect(results.length).toBeGreaterThan(10);
  });
});
