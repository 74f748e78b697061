/**
 * An A2A agent served in Python (`a2a-sdk`'s server, `test/fixtures/a2a/python_server.py`) seated in a discussion by
 * agent-runner as a `remote_agent`, beside a TypeScript agent of the same runner and a person, on a secured stack: it
 * takes its turns in order and answers exactly, and a turn it cannot be reached for fails with a connection cause.
 * Skipped when the Python of the cross-language tests cannot serve A2A (unless `AG2NET_REQUIRE_PYTHON=1`).
 */
import { createManualClock } from '@ag2net/hub';
import { HubClient, HubRpc, type Channel, type HumanClient } from '@ag2net/client';
import { EV_TEXT, EV_TURN_FAILED, OPERATOR_CALLER, type Envelope } from '@ag2net/protocol';
import { connectWithCreds, waitFor } from '@ag2net/test-support';
import { operatorCallerInboxPrefix } from '@ag2net/auth';
import type { NatsConnection } from '@nats-io/transport-node';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from './support/processes.js';
import { startPythonA2aServer, type PythonA2aServer } from './support/python-a2a-server.js';
import { PYTHON_REQUIRED, pythonWithAg2net } from './support/python.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const python = pythonWithAg2net();
/** Whether that Python has the A2A SDK's server parts and an ASGI server to run them. */
const canServe =
  python !== null && spawnSync(python, ['-c', 'import a2a.server.routes, starlette, uvicorn']).status === 0;
const KEYS = { sage: 'k-sage-py', acme: 'k-acme-py', me: 'k-me-py' };
const TOKEN = 'a2a-python-bearer-0123456789';
// The hub's clock never moves: no expectation (turn_within) fires while a turn runs.
const clock = createManualClock(Date.now());

let stack: SecuredStack;
let server: PythonA2aServer | undefined;
let runner: ServiceProcess | undefined;
let dir = '';
let hub: HubClient;
let me: HumanClient;
let operatorNc: NatsConnection;
let ops: HubRpc;

/** The channel's log as the operator reads it. */
async function logOf(channelId: string): Promise<Envelope[]> {
  return (await ops.call('readWal', { channel_id: channelId }, { caller: OPERATOR_CALLER })).envelopes;
}

const texts = (log: readonly Envelope[]) => log.filter((e) => e.event_type === EV_TEXT);
/** Entries other than the channel's own records (invites, acks). */
const spoken = (log: readonly Envelope[]) => log.filter((e) => !e.event_type.startsWith('ag2.channel.'));

describe.skipIf(!canServe && !PYTHON_REQUIRED)('a Python A2A agent in a discussion', () => {
  beforeAll(async () => {
    if (python === null || !canServe)
      throw new Error('the cross-language tests need a Python with a2a-sdk[http-server]');
    stack = await startSecuredStack({ apiKeys: KEYS, hub: { clock, sweepIntervalMs: 0, leaseTtlMs: 600_000 } });
    server = await startPythonA2aServer({ python });
    dir = await mkdtemp(join(tmpdir(), 'ag2net-runner-a2a-py-'));
    const configPath = join(dir, 'agents.yaml');
    const headers = '{ Authorization: { env: A2A_AUTH } }';
    await writeFile(
      configPath,
      [
        'agents:',
        "  - { name: sage, model: { provider: scripted, script: ['sage speaks'], loop: true } }",
        `  - { name: py-oracle, owner: acme, a2a: { url: '${server.url}', headers: ${headers} } }`,
        '',
      ].join('\n'),
    );
    // The remote agent is admitted with its owner's key: acme is an owner the operator allows.
    await writeFile(join(dir, 'keys.json'), JSON.stringify({ sage: KEYS.sage, acme: KEYS.acme }), { mode: 0o600 });
    const args = [configPath, '--nats-url', stack.url, '--prefix', stack.prefix, '--api-keys', join(dir, 'keys.json')];
    args.push('--creds', stack.paths.registrantCreds, '--creds-dir', join(dir, 'ids'));
    const started = startService('runner-a2a-py', 'agent-runner/src/main.ts', args, { A2A_AUTH: `Bearer ${TOKEN}` });
    runner = started;
    await waitFor(() => started.output().includes('runner ready'), { timeoutMs: 60_000, what: 'the runner ready' });
    hub = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
    me = await hub.registerHuman({ name: 'me', auth: { scheme: 'api_key', claim: { token: KEYS.me } } });
    operatorNc = await connectWithCreds({
      url: stack.url,
      creds: stack.operatorCallerCreds,
      inboxPrefix: operatorCallerInboxPrefix(stack.names),
    });
    ops = new HubRpc(operatorNc, { prefix: stack.prefix });
  }, 120_000);

  afterAll(async () => {
    await server?.kill();
    await runner?.stop('SIGKILL');
    await hub?.close();
    await operatorNc?.close();
    await stack?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  /** Opens a discussion of me, py-oracle and sage, and plays `rounds`: each closes when sage has spoken. */
  async function discuss(rounds: readonly string[]): Promise<Channel> {
    const sage = (await me.hub.findAgentId('sage')) ?? '';
    const channel = await me.open({ type: 'discussion', target: ['py-oracle', 'sage'] });
    for (const round of rounds) {
      await channel.send(round);
      await waitFor(async () => texts(await logOf(channel.channelId)).at(-1)?.sender_id === sage || undefined, {
        timeoutMs: 30_000,
        what: `sage to close ${round}`,
      });
    }
    return channel;
  }

  it('takes its turns in order between the person and the TypeScript agent, answering exactly what it heard', async () => {
    const [oracle, sage] = [(await me.hub.findAgentId('py-oracle')) ?? '', (await me.hub.findAgentId('sage')) ?? ''];
    const heardBefore = server?.heard().length ?? 0;
    const { channelId } = await discuss(['round one', 'round two']);
    const said = texts(await logOf(channelId));
    expect(said.map((e) => e.sender_id)).toEqual([me.agentId, oracle, sage, me.agentId, oracle, sage]);
    const [one, first, sageOne, two, second] = said;
    expect([first?.event_data['text'], first?.causation_id]).toEqual([
      'py-oracle heard: [me]: round one',
      one?.envelope_id,
    ]);
    // The runner answers from the delivery it handles: when sage's line reaches it only after `round two` passed
    // py-oracle the turn, that line is the trigger, and the transcript is read up to it.
    const bySage = second?.causation_id === sageOne?.envelope_id;
    expect([second?.event_data['text'], second?.causation_id]).toEqual(
      bySage
        ? ['py-oracle heard: [sage]: sage speaks', sageOne?.envelope_id]
        : ['py-oracle heard: [me]: round two', two?.envelope_id],
    );
    // The Python server was called once per turn of its own, never on the others' lines; it was sent the transcript
    // since its last answer, its trigger last.
    const heard = server?.heard().slice(heardBefore);
    const secondSent = bySage ? '[sage]: sage speaks' : '[sage]: sage speaks\n\n[me]: round two';
    expect(heard).toEqual(['[me]: round one', secondSent]);
    const passport = await me.hub.getAgent('py-oracle');
    expect([passport.kind, passport.owner, passport.provider]).toEqual(['remote_agent', 'acme', 'a2a']);
    expect(JSON.stringify(passport)).not.toContain(TOKEN);
    // The round is closed: the person speaks next, and nothing more was written.
    const state = await ops.call('adapterState', { channel_id: channelId }, { caller: OPERATOR_CALLER });
    expect(state.state).toMatchObject({ expected_next_speaker: me.agentId });
    expect(spoken(await logOf(channelId))).toHaveLength(6);
  }, 90_000);

  it('a turn taken after the Python server was killed fails with a connection cause and writes nothing else', async () => {
    const [oracle, sage] = [(await me.hub.findAgentId('py-oracle')) ?? '', (await me.hub.findAgentId('sage')) ?? ''];
    const channel = await discuss(['before the kill']);
    const channelId = channel.channelId;
    const heardBefore = server?.heard().length ?? 0;
    await server?.kill();
    await channel.send('after the kill');
    const log = await waitFor(
      async () => {
        const entries = await logOf(channelId);
        return entries.some((e) => e.event_type === EV_TURN_FAILED) ? entries : undefined;
      },
      { timeoutMs: 30_000, what: "py-oracle's failed turn" },
    );
    const own = spoken(log);
    const askedAt = own.findIndex((e) => e.event_type === EV_TEXT && e.event_data['text'] === 'after the kill');
    const asked = own[askedAt];
    // Before the kill the round went as usual (the person, py-oracle, sage); then the person's line, and only the
    // failed turn after it.
    expect(own.map((e) => e.sender_id)).toEqual([me.agentId, oracle, sage, me.agentId, oracle]);
    expect([askedAt, own[4]?.event_type, own[4]?.causation_id]).toEqual([3, EV_TURN_FAILED, asked?.envelope_id]);
    const host = new URL(server?.url ?? '').host;
    expect(own[4]?.event_data).toEqual({
      agent_name: 'py-oracle',
      reason: 'the A2A agent could not be reached',
      code: 'model_unavailable',
      cause: { kind: 'connection', exc_type: 'TypeError', code: 'ECONNREFUSED', message: `ECONNREFUSED ${host}` },
      attempts: 1,
      provider: 'a2a',
      model: host,
    });
    expect(server?.heard().length).toBe(heardBefore);
    // The turn stays py-oracle's: nobody else is due to write.
    const state = await ops.call('adapterState', { channel_id: channelId }, { caller: OPERATOR_CALLER });
    expect(state.state).toMatchObject({ expected_next_speaker: oracle, turn_count: 4 });
  }, 90_000);
});
