/**
 * A Python A2A client (`a2a-sdk`) reaching network agents through the bridge: an agent-runner hosts `oracle` on the
 * scripted model on a secured stack, and an SDK agent `gate` answers only when the test lets it. The Python side signs
 * nothing itself, it sends a person's bearer token: `test/fixtures/a2a/python_client.py` resolves the card, streams a
 * question, follows up in the same context and reads the task back; `test/fixtures/a2a/python_tasks.py` cancels a task
 * `gate` holds, and resubscribes on a second bridge replica to a task whose stream the first one served before it
 * closed.
 * Skipped when the Python of the cross-language tests has no `a2a-sdk` (unless `AG2NET_REQUIRE_PYTHON=1`).
 */
import { startBridge, type Bridge } from '@ag2net/bridge';
import { HubClient } from '@ag2net/client';
import { EV_CHANNEL_CLOSED } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Gates, gatedAnswers } from './support/bridge-a2a.js';
import { call } from './support/bridge-http.js';
import { startRunner, type ServiceProcess } from './support/processes.js';
import { startPythonScript } from './support/python-script.js';
import { PYTHON_REQUIRED, pythonWithAg2net } from './support/python.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { stackBridgeOptions } from './support/stack-bridge.js';

const python = pythonWithAg2net();
/** Whether that Python can import the A2A SDK's client. */
const hasA2a = python !== null && spawnSync(python, ['-c', 'import a2a.client']).status === 0;
const ANSWERS = ['Paris.', 'Rome.'] as const;
const KEYS = { alice: 'k-alice-a2a-py', oracle: 'k-oracle-a2a-py', gate: 'k-gate-a2a-py' } as const;
const TASKS_SCRIPT = join('test', 'fixtures', 'a2a', 'python_tasks.py');
/** How long one run of a Python script may take, in milliseconds. */
const SCRIPT_TIMEOUT_MS = 60_000;

const Line = z.looseObject({ event: z.string() });
const ChannelReply = z.object({ channel: z.object({ state: z.string(), close_reason: z.string() }) });
const LogPage = z.object({
  envelopes: z.array(
    z.object({ event_type: z.string(), sender_id: z.string(), event_data: z.record(z.string(), z.unknown()) }),
  ),
});

let stack: SecuredStack;
let dir = '';
let runner: ServiceProcess | undefined;
let sdk: HubClient | undefined;
/** Two replicas of the bridge on the same stack; `a` is closed by the last test. */
let a: Bridge | undefined;
let b: Bridge;
let token = '';
const gates = new Gates();

/** The JSON lines a script printed on `stdout`. */
function linesOf(stdout: string) {
  return stdout
    .trim()
    .split('\n')
    .map((l) => Line.parse(JSON.parse(l)));
}

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
    sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
    await sdk.register(
      { name: 'gate', auth: { scheme: 'api_key', claim: { token: KEYS.gate } } },
      { handler: gatedAnswers(gates) },
    );
    // One set of options, so one token secret: a session opened on one replica is good on the other.
    const options = stackBridgeOptions(stack, { apiKeys: { alice: KEYS.alice } });
    a = await startBridge(options);
    b = await startBridge(options);
    const session = await call(b.url, '/v1/session', { body: { name: 'alice', api_key: KEYS.alice } });
    token = z.object({ token: z.string() }).parse(session.body).token;
    await waitFor(async () => ((await call(b.url, '/v1/agents/oracle', { token })).status === 200 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the runner registering oracle',
    });
  }, 90_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await sdk?.close();
    await runner?.stop();
    await stack?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('streams a question, follows up in the same context and reads the task back, with the exact answers', async () => {
    if (python === null || !hasA2a) throw new Error('the cross-language tests need a Python with a2a-sdk installed');
    const script = join('test', 'fixtures', 'a2a', 'python_client.py');
    const { stdout } = await promisify(execFile)(
      python,
      [script, b.url, 'oracle', token, 'Capital of France?', 'And of Italy?'],
      { timeout: SCRIPT_TIMEOUT_MS },
    );
    const lines = linesOf(stdout);
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

  it('cancels a task the agent has not answered: canceled, the channel closed by the caller, a second cancel refused', async () => {
    if (python === null || !hasA2a) throw new Error('the cross-language tests need a Python with a2a-sdk installed');
    // The gate of this question is never opened: the agent holds it unanswered.
    const { stdout } = await promisify(execFile)(python, [TASKS_SCRIPT, 'cancel', b.url, 'gate', token, 'hold this'], {
      timeout: SCRIPT_TIMEOUT_MS,
    });
    const lines = linesOf(stdout);
    const sent = z.object({ task: z.string(), context: z.string() }).parse(lines[0]);
    expect(lines).toEqual([
      { event: 'sent', task: sent.task, context: sent.context, state: 'TASK_STATE_WORKING' },
      { event: 'canceled', task: sent.task, state: 'TASK_STATE_CANCELED' },
      { event: 'cancel-again', error: 'TaskNotCancelableError' },
      { event: 'task', state: 'TASK_STATE_CANCELED', text: 'canceled', history: 1 },
    ]);
    const channel = ChannelReply.parse((await call(b.url, `/v1/channels/${sent.context}`, { token })).body).channel;
    expect(channel).toEqual({ state: 'closed', close_reason: 'canceled' });
    const me = z.object({ agent_id: z.string() }).parse((await call(b.url, '/v1/me', { token })).body);
    const log = LogPage.parse((await call(b.url, `/v1/channels/${sent.context}/log`, { token })).body);
    const closed = log.envelopes.filter((e) => e.event_type === EV_CHANNEL_CLOSED);
    expect(closed.map((e) => [e.sender_id, e.event_data['reason']])).toEqual([[me.agent_id, 'canceled']]);
  });

  it('resubscribes on a second replica after the one serving the stream closed: every event once, in order', async () => {
    if (python === null || !hasA2a) throw new Error('the cross-language tests need a Python with a2a-sdk installed');
    const replica = a;
    if (replica === undefined) throw new Error('replica A is not running');
    const question = 'slow question';
    const answer = `gate: ${question}`;
    const script = startPythonScript({
      python,
      script: TASKS_SCRIPT,
      args: ['resubscribe', replica.url, b.url, 'gate', token, question],
    });
    try {
      const first = await script.line((l) => l.event === 'stream');
      const task = z.object({ task: z.string() }).parse(first).task;
      // The replica that served the stream goes away; what it had not sent yet is in the log.
      await replica.close();
      script.write('replica A closed');
      // The agent answers once the resubscription through B has sent the task as it stands.
      await script.line((l) => l.event === 'resumed');
      gates.of(question).open();
      expect(await script.exit(SCRIPT_TIMEOUT_MS), script.stderr()).toBe(0);
      expect(script.lines).toEqual([
        { event: 'stream', kind: 'task', task, state: 'TASK_STATE_WORKING' },
        // Closing a replica drops its connections: the stream through A breaks off (an incomplete chunked body).
        { event: 'stream-ended', error: 'A2AClientError' },
        { event: 'resumed', kind: 'task', task, state: 'TASK_STATE_WORKING' },
        { event: 'resumed', kind: 'artifact_update', task, text: answer },
        { event: 'resumed', kind: 'status_update', task, state: 'TASK_STATE_COMPLETED', text: answer },
        { event: 'resumed-ended' },
        // Once completed, the task is read, not subscribed to.
        { event: 'again', error: 'UnsupportedOperationError' },
        { event: 'task', state: 'TASK_STATE_COMPLETED', text: answer, history: 2 },
      ]);
    } finally {
      await script.kill();
    }
  });
});
