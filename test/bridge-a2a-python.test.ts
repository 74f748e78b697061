/**
 * A Python A2A client (`a2a-sdk`) reaching a network agent through the bridge: an agent-runner hosts `oracle` on the
 * scripted model on a secured stack; `test/fixtures/a2a/python_client.py` signs nothing itself, it sends a person's
 * bearer token, resolves the card, streams a question, follows up in the same context and reads the task back.
 * Skipped when the Python of the cross-language tests has no `a2a-sdk` (unless `AG2NET_REQUIRE_PYTHON=1`).
 */
import { startBridge, type Bridge } from '@ag2net/bridge';
import { waitFor } from '@ag2net/test-support';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';
import { startRunner, type ServiceProcess } from './support/processes.js';
import { PYTHON_REQUIRED, pythonWithAg2net } from './support/python.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { stackBridgeOptions } from './support/stack-bridge.js';

const python = pythonWithAg2net();
/** Whether that Python can import the A2A SDK's client. */
const hasA2a = python !== null && spawnSync(python, ['-c', 'import a2a.client']).status === 0;
const ANSWERS = ['Paris.', 'Rome.'] as const;
const KEYS = { alice: 'k-alice-a2a-py', oracle: 'k-oracle-a2a-py' } as const;

const Line = z.looseObject({ event: z.string() });

let stack: SecuredStack;
let dir = '';
let runner: ServiceProcess | undefined;
let bridge: Bridge;
let token = '';

describe.skipIf(!hasA2a && !PYTHON_REQUIRED)('A2A from Python', () => {
  beforeAll(async () => {
    stack = await startSecuredStack({ apiKeys: KEYS });
    dir = await mkdtemp(join(tmpdir(), 'ag2net-a2a-py-'));
    await writeFile(join(dir, 'keys.json'), JSON.stringify({ oracle: KEYS.oracle }), { mode: 0o600 });
    await writeFile(
      join(dir, 'agents.yaml'),
      ['agents:', '  - name: oracle', `    model: { provider: scripted, script: [${ANSWERS.join(', ')}] }`, ''].join(
        '\n',
      ),
    );
    runner = startRunner({
      natsUrl: stack.url,
      prefix: stack.prefix,
      configPath: join(dir, 'agents.yaml'),
      name: 'a2a-py-runner',
      extraArgs: [
        '--creds',
        stack.paths.registrantCreds,
        '--creds-dir',
        join(dir, 'creds'),
        '--api-keys',
        join(dir, 'keys.json'),
      ],
    });
    bridge = await startBridge(stackBridgeOptions(stack, { apiKeys: { alice: KEYS.alice } }));
    const session = await call(bridge.url, '/v1/session', { body: { name: 'alice', api_key: KEYS.alice } });
    token = z.object({ token: z.string() }).parse(session.body).token;
    await waitFor(
      async () => ((await call(bridge.url, '/v1/agents/oracle', { token })).status === 200 ? true : undefined),
      { timeoutMs: 30_000, what: 'the runner registering oracle' },
    );
  }, 90_000);

  afterAll(async () => {
    await bridge?.close();
    await runner?.stop();
    await stack?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('streams a question, follows up in the same context and reads the task back, with the exact answers', async () => {
    if (python === null || !hasA2a) throw new Error('the cross-language tests need a Python with a2a-sdk installed');
    const script = join('test', 'fixtures', 'a2a', 'python_client.py');
    const { stdout } = await promisify(execFile)(
      python,
      [script, bridge.url, 'oracle', token, 'Capital of France?', 'And of Italy?'],
      { timeout: 60_000 },
    );
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => Line.parse(JSON.parse(l)));
    const stream = lines.filter((l) => l.event === 'stream');
    expect(stream[0]).toMatchObject({ kind: 'task', state: 'TASK_STATE_WORKING' });
    expect(stream.at(-1)).toEqual({
      event: 'stream',
      kind: 'status_update',
      state: 'TASK_STATE_COMPLETED',
      text: ANSWERS[0],
    });
    expect(lines.filter((l) => l.event === 'follow-up').at(-1)).toEqual({
      event: 'follow-up',
      context: true,
      state: 'TASK_STATE_COMPLETED',
      text: ANSWERS[1],
    });
    expect(lines.find((l) => l.event === 'task')).toEqual({
      event: 'task',
      state: 'TASK_STATE_COMPLETED',
      text: ANSWERS[0],
      history: 2,
    });
  });
});
