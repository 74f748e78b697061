import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const LAYERS = 'base < observe < audit < governance < auth < nats < lease < stores < partition < operations < rpc < .';

/** The repository's own lint config, narrowed to the rule that keeps packages/hub/src's folders in layers. */
function layersLint(): ESLint {
  return new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => ruleId === 'ag2net/folder-layers' });
}

/** The layer rule's messages for `text` linted as if it were the module at `file` (relative to the repository). */
async function messagesFor(text: string, file: string): Promise<string[]> {
  const [result] = await layersLint().lintText(text, { filePath: `${root}${file}` });
  return (result?.messages ?? []).map((m) => m.message);
}

describe('hub folder layers', () => {
  it('no module of packages/hub/src imports from a higher folder', { timeout: 120_000 }, async () => {
    const results = await layersLint().lintFiles(['packages/hub/src/**/*.ts']);
    const upward = results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.message}`));
    expect(upward).toEqual([]);
    expect(results.length).toBeGreaterThan(100);
  });

  it(
    'an import from the ground folder of the hub entry is an error naming both files and the layers',
    { timeout: 60_000 },
    async () => {
      const messages = await messagesFor(
        "import type { Hub } from '../hub.js';\nexport type Probe = Hub;\n",
        'packages/hub/src/base/clock.ts',
      );
      expect(messages).toEqual([
        `packages/hub/src/base/clock.ts (base) imports packages/hub/src/hub.ts (.), a higher layer. The layers of packages/hub/src, from the ground up: ${LAYERS}; a module imports only its own folder's and those below it.`,
      ]);
    },
  );

  it('an import from a folder the layers do not list is an error', { timeout: 60_000 }, async () => {
    const messages = await messagesFor(
      "import type { Probe } from '../extra/probe.js';\nexport type Again = Probe;\n",
      'packages/hub/src/operations/sweep.ts',
    );
    expect(messages).toEqual([
      `packages/hub/src/operations/sweep.ts imports packages/hub/src/extra/probe.ts, but folder 'extra' has no place in the layers of packages/hub/src: ${LAYERS}. Add it to the list where it belongs.`,
    ]);
  });

  it('imports of the own folder and of lower folders pass', { timeout: 60_000 }, async () => {
    const text = [
      "import type { Clock } from '../base/clock.js';",
      "import type { HubEnv } from '../partition/hub-parts.js';",
      "import type { AccessDirectory } from './access.js';",
      'export type Probe = [Clock, HubEnv, AccessDirectory];',
      '',
    ].join('\n');
    expect(await messagesFor(text, 'packages/hub/src/operations/sweep.ts')).toEqual([]);
  });
});
