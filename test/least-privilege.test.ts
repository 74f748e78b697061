/**
 * The whole system under least privilege: a secured nats-server, hubs on the hub-service user's credentials, and
 * every agent and person on the credentials the hub issued to it, registered through the registrant with its own
 * API key. All four protocols with the demo agents hosted by two runner replicas (turn locks across replicas), then
 * delegation, tasks, a person reconnecting with its persisted credentials, and a hub failover with renewal on the
 * new hub.
 */
import { Agent, createScriptedModel, registerAgent, toolCall } from '@ag2net/agent';
import { HubClient, type HumanClient } from '@ag2net/client';
import { EV_TEXT, TaskState, type Envelope } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { decode, type User } from '@nats-io/jwt';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_AGENTS, DEMO_PERSON, runDemo } from '../scripts/stack/demo.js';
import { startService, type ServiceProcess } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { ViolationRecorder } from './support/violations.js';

const OFFLINE = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '' };
const IDENTITIES = [...DEMO_AGENTS, DEMO_PERSON, 'alice', 'bob', 'carol'];
const KEYS = Object.fromEntries(IDENTITIES.map((name) => [name, `key-of-${name}-${uniqueName('k')}`]));
const apiKey = (name: string) => ({ scheme: 'api_key', claim: { token: KEYS[name] ?? '' } });

let stack: SecuredStack;
let dir: string;
let credsDir: string;
let keysFile: string;
let registrant: HubClient;
const runners: ServiceProcess[] = [];
/** Permissions violations on the in-process identities' own connections: none may occur. */
const violations: ViolationRecorder[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS, hub: { sweepIntervalMs: 500, inboxAckWaitMs: 5_000 } });
  // A hot standby on its own hub-service connection, issuing with the same signing key.
  await stack.startHub();
  dir = await mkdtemp(join(tmpdir(), 'ag2net-least-'));
  credsDir = join(dir, 'creds');
  keysFile = join(dir, 'api-keys.json');
  await writeFile(keysFile, JSON.stringify(KEYS), { mode: 0o600 });
  for (const name of ['runner-a', 'runner-b']) {
    runners.push(
      startService(
        name,
        'agent-runner/src/main.ts',
        [
          'agent-runner/demo/agents.yaml',
          ...['--nats-url', stack.url, '--prefix', stack.prefix, '--turn-lock-ttl-ms', '3000'],
          ...['--creds', stack.paths.registrantCreds, '--creds-dir', credsDir, '--api-keys', keysFile],
        ],
        OFFLINE,
      ),
    );
  }
  registrant = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
}, 60_000);

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop('SIGKILL')));
  await registrant?.close();
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The identity an issued `.creds` file is for, and the only reply prefix it may subscribe to. */
async function issuedTo(path: string): Promise<{ name: string | undefined; subscribe: string[] | undefined }> {
  const jwt = /-----BEGIN NATS USER JWT-----\n(\S+)\n/.exec(await readFile(path, 'utf8'))?.[1] ?? '';
  const claims = decode<User>(jwt);
  return { name: claims.name, subscribe: claims.nats.sub?.allow };
}

const textOf = (e: Envelope | null): unknown => e?.event_data['text'];

describe('least privilege, end to end', () => {
  it('runs every protocol with a person and the demo agents hosted by two runner replicas', async () => {
    await waitFor(() => runners.every((r) => (r.output().match(/"hosting agent"/g) ?? []).length === 6), {
      what: 'both runners to host the six demo agents',
      timeoutMs: 45_000,
    });
    const lines: string[] = [];
    await runDemo({
      natsUrl: stack.url,
      prefix: stack.prefix,
      say: (l) => void lines.push(l),
      turnTimeoutMs: 30_000,
      auth: { creds: stack.paths.registrantCreds, apiKeys: KEYS, credsDir },
    });
    const text = lines.join('\n');
    expect(text).toContain('· channel closed: consulting_complete');
    expect(text.match(/· channel closed: demo_done/g)).toHaveLength(2);
    expect(text).toContain('workflow ended: resolved');
    // Two replicas share each agent's inbox, and the hub's turn locks let one of them answer each turn, once.
    const answers = Object.fromEntries(DEMO_AGENTS.map((n) => [n, text.match(new RegExp(` ${n}: `, 'g'))?.length]));
    expect(answers).toEqual({ expert: 1, pal: 2, critic: 1, optimist: 1, triage: 1, billing: 1 });

    // Each identity holds credentials for itself alone: its own reply prefix, never the shared `_INBOX.>`.
    const files = (await readdir(credsDir)).sort();
    expect(files).toEqual([...DEMO_AGENTS, DEMO_PERSON].map((n) => `${n}.creds`).sort());
    for (const file of files) {
      const { name, subscribe } = await issuedTo(join(credsDir, file));
      expect(subscribe).toEqual([`_INBOX_${name ?? ''}.>`]);
    }
    for (const runner of runners) expect(runner.output()).not.toMatch(/Permissions Violation/i);
  }, 90_000);

  it('delegates, tracks a task, reconnects a person, and survives a hub failover with renewal', async () => {
    const credsOf = (name: string): string => join(dir, `${name}.creds`);
    const bob = await registerAgent(registrant, new Agent({ name: 'bob', model: createScriptedModel(['4']) }), {
      passport: { auth: apiKey('bob') },
      credsPath: credsOf('bob'),
    });
    const aliceModel = createScriptedModel([
      toolCall('delegate', { target: 'bob', prompt: 'what is 2+2?' }),
      'The answer is 4.',
    ]);
    const alice = await registerAgent(registrant, new Agent({ name: 'alice', model: aliceModel }), {
      passport: { auth: apiKey('alice') },
      credsPath: credsOf('alice'),
    });
    const carolOptions = { passport: { name: 'carol', auth: apiKey('carol') }, credsPath: credsOf('carol') };
    let carol: HumanClient = await registrant.attachHuman('carol', carolOptions);
    for (const p of [alice, bob, carol]) violations.push(new ViolationRecorder(p.hub.nc));

    // Delegation: alice consults bob in a channel of her own, mid-turn, and answers carol with bob's reply.
    const chat = await carol.open({ type: 'conversation', target: 'alice' });
    await chat.send('please ask bob');
    const answer = await carol.waitForChannelEvent(chat.channelId, {
      timeout: 15_000,
      predicate: (e) => e.event_type === EV_TEXT && e.sender_id === alice.agentId,
    });
    expect(textOf(answer)).toBe('The answer is 4.');
    const [consulting] = await bob.listChannels({ agent_id: bob.agentId });
    expect([consulting?.manifest.type, consulting?.creator_id]).toEqual(['consulting', alice.agentId]);

    // A task alice owns in the shared channel: carol reads it as a participant.
    const task = { task_id: uniqueName('task'), channel_id: chat.channelId, owner_id: alice.agentId };
    const asAlice = { caller: alice.agentId };
    await alice.hub.call('observeTask', { task: { ...task, state: TaskState.Running, created_at: nowIso() } }, asAlice);
    await alice.hub.call('updateTask', { task_id: task.task_id, state: TaskState.Completed, result: 'ok' }, asAlice);
    const read = await carol.hub.call('getTask', { task_id: task.task_id }, { caller: carol.agentId });
    expect([read.task.state, read.task.result]).toEqual([TaskState.Completed, 'ok']);

    // Carol leaves; what alice says meanwhile waits in her inbox, and reaches her once she is back, on her own creds.
    await carol.disconnect();
    const missed = await alice.send(chat.channelId, 'while you were away');
    carol = await registrant.attachHuman('carol', carolOptions);
    violations.push(new ViolationRecorder(carol.hub.nc));
    const back = await carol.waitForChannelEvent(chat.channelId, {
      timeout: 15_000,
      predicate: (e) => e.envelope_id === missed,
    });
    expect(textOf(back)).toBe('while you were away');

    // Failover: the active hub steps down, the standby serves; credentials are renewed by the new hub.
    const before = carol.hub.nc.info?.client_id;
    await stack.hub.close();
    const renewed = await carol.hub.call('renewCredentials', {}, { caller: carol.agentId, timeout: 20_000 });
    expect(decode<User>(renewed.credentials.jwt).name).toBe(carol.agentId);
    const after = await alice.send(chat.channelId, 'served by the standby');
    const delivered = await carol.waitForChannelEvent(chat.channelId, {
      timeout: 15_000,
      predicate: (e) => e.envelope_id === after,
    });
    expect(textOf(delivered)).toBe('served by the standby');
    expect(carol.hub.nc.info?.client_id).toBe(before);
    expect(violations.map((v) => v.seen)).toEqual(violations.map(() => []));
    await carol.disconnect();
  }, 60_000);
});

function nowIso(): string {
  return new Date().toISOString();
}
