/**
 * Remote A2A agents seated in channels by agent-runner, against a real A2A server (`@a2a-js/sdk` on node:http) and a
 * secured stack: they take their turns in order beside a TypeScript agent and a person, are skipped by `turn_within`
 * / `hide` when they hang, fail their turns with a cause when the remote misbehaves, are answered once when their
 * replica dies mid-call, and are registered only for an owner the operator allows.
 */
import { createManualClock } from '@ag2net/hub';
import { HubClient, HubRpc, type HumanClient } from '@ag2net/client';
import {
  EV_CHANNEL_INVITE_ACK,
  EV_EXPECTATION_VIOLATED,
  EV_TEXT,
  EV_TURN_FAILED,
  OPERATOR_CALLER,
  type Envelope,
  type PassportInput,
} from '@ag2net/protocol';
import { closedPort, connectWithCreds, waitFor } from '@ag2net/test-support';
import { createIdentityKeys, operatorCallerInboxPrefix } from '@ag2net/auth';
import type { NatsConnection } from '@nats-io/transport-node';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA2aServer, type TestA2aServer } from './support/a2a-server.js';
import { startService, type ServiceProcess } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const KEYS = { sage: 'k-sage', acme: 'k-acme', me: 'k-me' };
const TOKEN = 'a2a-bearer-0123456789';
const clock = createManualClock(Date.now());

let stack: SecuredStack;
let server: TestA2aServer;
let dir: string;
let hub: HubClient;
let me: HumanClient;
/** The operator's connection: reads every channel's whole log. */
let operatorNc: NatsConnection;
let ops: HubRpc;
const replicas: ServiceProcess[] = [];

/** A remote agent of the runner's file: `path` on the test server, owned by acme. */
function remote(name: string, url: string, extra = ''): string {
  const headers = '{ Authorization: { env: A2A_AUTH }, X-Replica: { env: REPLICA } }';
  return `  - { name: ${name}, owner: acme, a2a: { url: '${url}', headers: ${headers}${extra} } }`;
}

beforeAll(async () => {
  stack = await startSecuredStack({
    apiKeys: KEYS,
    hub: { clock, sweepIntervalMs: 0, leaseTtlMs: 600_000, inboxAckWaitMs: 3_000 },
  });
  server = await startA2aServer();
  dir = await mkdtemp(join(tmpdir(), 'ag2net-runner-a2a-'));
  const o = server.origin;
  const configPath = join(dir, 'agents.yaml');
  await writeFile(
    configPath,
    [
      'agents:',
      "  - { name: sage, model: { provider: scripted, script: ['sage speaks'], loop: true } }",
      remote('oracle', `${o}/agent?name=oracle`),
      remote('hanger', `${o}/drip`, ', timeout_ms: 3600000'),
      remote('slowpoke', `${o}/drip`, ', timeout_ms: 8000'),
      remote('giant', `${o}/huge`),
      remote('broken', `${o}/http500`),
      remote('failing', `${o}/failing`),
      remote('unreachable', `http://127.0.0.1:${await closedPort()}/a2a`),
      remote('gatekeeper', `${o}/gated?name=gatekeeper`),
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ sage: KEYS.sage, acme: KEYS.acme }));
  for (const name of ['replica-a', 'replica-b']) {
    const args = [
      configPath,
      '--nats-url',
      stack.url,
      '--prefix',
      stack.prefix,
      '--creds',
      stack.paths.registrantCreds,
    ];
    args.push('--creds-dir', join(dir, 'ids'), '--api-keys', join(dir, 'keys.json'));
    const env = { A2A_AUTH: `Bearer ${TOKEN}`, REPLICA: name, LOG_LEVEL: 'debug' };
    const replica = startService(name, 'agent-runner/src/main.ts', args, env);
    replicas.push(replica);
    // One at a time: the first registers every agent, the second attaches with the credentials it kept.
    await waitFor(() => replica.output().includes('runner ready'), { timeoutMs: 60_000, what: `${name} ready` });
  }
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
  server.release();
  await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
  await hub?.close();
  await operatorNc?.close();
  await server?.close();
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

const idOf = async (name: string): Promise<string> => (await me.hub.findAgentId(name)) ?? '';

/** The channel's log as the operator reads it. */
async function logOf(channelId: string): Promise<Envelope[]> {
  return (await ops.call('readWal', { channel_id: channelId }, { caller: OPERATOR_CALLER })).envelopes;
}

const texts = (log: readonly Envelope[]) => log.filter((e) => e.event_type === EV_TEXT);

describe('remote A2A agents in channels', () => {
  it('a remote agent takes its turns in a discussion with a TypeScript agent and a person, in order', async () => {
    const [oracle, sage] = [await idOf('oracle'), await idOf('sage')];
    const channel = await me.open({ type: 'discussion', target: ['oracle', 'sage'] });
    for (const round of ['round one', 'round two']) {
      await channel.send(round);
      await waitFor(async () => texts(await logOf(channel.channelId)).at(-1)?.sender_id === sage || undefined, {
        timeoutMs: 20_000,
        what: `sage to close ${round}`,
      });
    }
    const said = texts(await logOf(channel.channelId)).map((e) => [e.sender_id, e.event_data['text']]);
    // The default handler answers a turn from the delivery it is handling: when sage's line reaches oracle only after
    // `round two` passed it the turn, that line is the trigger, and the log is read up to it.
    const heardTwice =
      said[4]?.[1] === 'oracle heard: [sage]: sage speaks' ? said[4][1] : 'oracle heard: [me]: round two';
    expect(said).toEqual([
      [me.agentId, 'round one'],
      // The remote is sent what it missed as the transcript renders it, the trigger last.
      [oracle, 'oracle heard: [me]: round one'],
      [sage, 'sage speaks'],
      [me.agentId, 'round two'],
      [oracle, heardTwice],
      [sage, 'sage speaks'],
    ]);
    // Every call carried the configured credentials, never the passport's.
    expect(server.lastHeaders('/agent')?.authorization).toBe(`Bearer ${TOKEN}`);
    const passport = await me.hub.getAgent('oracle');
    expect([passport.kind, passport.owner, passport.provider]).toEqual(['remote_agent', 'acme', 'a2a']);
    expect(JSON.stringify(passport)).not.toContain(TOKEN);

    // A conversation and a consulting channel alike (two parties: the transcript names nobody).
    for (const type of ['conversation', 'consulting']) {
      const other = await me.open({ type, target: 'oracle' });
      await other.send(`hello from a ${type}`);
      const answer = await waitFor(
        async () => texts(await logOf(other.channelId)).find((e) => e.sender_id === oracle),
        { timeoutMs: 20_000, what: `oracle's answer in the ${type}` },
      );
      expect(answer.event_data['text']).toBe(`oracle heard: hello from a ${type}`);
    }
  });

  it('a remote agent that hangs is warned and hidden by turn_within, and the next speaker takes the turn', async () => {
    const [hanger, sage] = [await idOf('hanger'), await idOf('sage')];
    const channel = await me.open({ type: 'discussion', target: ['hanger', 'sage'] });
    const before = server.calls('/drip');
    await channel.send('anyone?');
    await waitFor(() => server.calls('/drip') > before || undefined, { timeoutMs: 20_000, what: 'the hanging call' });
    clock.advance(120_000);
    await stack.hub.tick();
    clock.advance(480_000);
    await stack.hub.tick();
    const violations = await waitFor(
      async () => {
        const found = (await logOf(channel.channelId)).filter((e) => e.event_type === EV_EXPECTATION_VIOLATED);
        return found.length === 2 ? found : undefined;
      },
      { timeoutMs: 20_000, what: 'the warning and the hide' },
    );
    expect(violations.map((v) => [v.event_data['on_violation'], v.event_data['violators']])).toEqual([
      ['warn', [hanger]],
      ['hide', [hanger]],
    ]);
    const state = await ops.call('adapterState', { channel_id: channel.channelId }, { caller: OPERATOR_CALLER });
    expect(state.state).toMatchObject({ expected_next_speaker: sage, hidden: [hanger] });
    // The hanging call is still open: the hanger wrote nothing but its invite ack.
    const own = (await logOf(channel.channelId)).filter((e) => e.sender_id === hanger);
    expect(own.map((e) => e.event_type)).toEqual([EV_CHANNEL_INVITE_ACK]);
    // The hide record reached sage too: its runner took the turn it passed on, answering the channel's last text.
    const asked = texts(await logOf(channel.channelId)).find((e) => e.sender_id === me.agentId);
    const answer = await waitFor(async () => texts(await logOf(channel.channelId)).find((e) => e.sender_id === sage), {
      timeoutMs: 20_000,
      what: "sage's turn after the hide",
    });
    expect([answer.causation_id, asked?.event_data['text']]).toEqual([asked?.envelope_id, 'anyone?']);
  });

  it('a hostile remote (10 MB answer, an endless slow answer, HTTP 500, a failed task, a refused connection) fails its turn with a cause and writes nothing else, and others are not slowed', async () => {
    const hostile = ['giant', 'slowpoke', 'broken', 'failing', 'unreachable'];
    const channels = new Map<string, string>();
    for (const name of hostile) {
      const channel = await me.open({ type: 'consulting', target: name });
      await channel.send(`${name}, what is a log?`);
      channels.set(name, channel.channelId);
    }
    const slowChannel = channels.get('slowpoke') ?? '';
    const quick = await me.open({ type: 'consulting', target: 'sage' });
    await quick.send('quick one');
    const sage = await idOf('sage');
    await waitFor(async () => texts(await logOf(quick.channelId)).some((e) => e.sender_id === sage) || undefined, {
      timeoutMs: 20_000,
      what: "sage's answer",
    });
    // sage answered while the endless answer was still streaming: its turn had not failed yet.
    expect((await logOf(slowChannel)).filter((e) => e.event_type === EV_TURN_FAILED)).toEqual([]);

    const failures = new Map<string, Record<string, unknown>>();
    for (const name of hostile) {
      const id = await idOf(name);
      const channelId = channels.get(name) ?? '';
      const log = await waitFor(
        async () => {
          const entries = await logOf(channelId);
          return entries.some((e) => e.event_type === EV_TURN_FAILED) ? entries : undefined;
        },
        { timeoutMs: 30_000, what: `${name}'s failed turn` },
      );
      const own = log.filter((e) => e.sender_id === id && !e.event_type.startsWith('ag2.channel.'));
      expect(own.map((e) => e.event_type)).toEqual([EV_TURN_FAILED]);
      failures.set(name, own[0]?.event_data ?? {});
    }
    const summary = (name: string) => {
      const data = failures.get(name) ?? {};
      return { code: data['code'], cause: data['cause'], provider: data['provider'] };
    };
    expect(summary('giant')).toEqual({
      code: 'model_malformed_output',
      cause: { kind: 'malformed_output', exc_type: 'A2aAnswerTooLargeError', code: 'answer_too_large' },
      provider: 'a2a',
    });
    expect(summary('slowpoke')).toEqual({
      code: 'model_timeout',
      cause: { kind: 'timeout', exc_type: 'TimeoutError', message: 'no answer within 8 s' },
      provider: 'a2a',
    });
    expect(summary('broken')).toEqual({
      code: 'model_unavailable',
      cause: { kind: 'http', exc_type: 'A2aHttpError', status: 500 },
      provider: 'a2a',
    });
    expect(summary('failing')).toEqual({
      code: 'model_error',
      cause: { kind: 'error', exc_type: 'A2aTaskEndedError', code: 'TASK_STATE_FAILED', message: 'the remote broke' },
      provider: 'a2a',
    });
    expect(summary('unreachable')).toMatchObject({
      code: 'model_unavailable',
      cause: { kind: 'connection', exc_type: 'TypeError', code: 'ECONNREFUSED' },
    });
    const shown = JSON.stringify([...failures.values()]);
    expect(shown).not.toContain(TOKEN);
    expect(shown).not.toContain('secret stack trace');
  }, 90_000);

  it('registration of a remote_agent for an owner the operator does not allow is refused', async () => {
    const attempt = async (passport: PassportInput) => {
      try {
        await hub.rpc.call('register', { passport, public_key: createIdentityKeys().publicKey });
      } catch (err) {
        return err instanceof Error ? [Reflect.get(err, 'code'), err.message, Reflect.get(err, 'details')] : err;
      }
      return 'registered';
    };
    const token = (t: string) => ({ scheme: 'api_key', claim: { token: t } });
    expect(await attempt({ name: 'intruder', kind: 'remote_agent', owner: 'mallory', auth: token('k-guess') })).toEqual(
      ['auth_failed', "owner 'mallory' is not allowed to register remote agents", { owner: 'mallory' }],
    );
    // An owner's name with another's key is refused alike; and a remote agent must name its owner.
    expect(await attempt({ name: 'intruder', kind: 'remote_agent', owner: 'acme', auth: token(KEYS.sage) })).toEqual([
      'auth_failed',
      "owner 'acme' is not allowed to register remote agents",
      { owner: 'acme' },
    ]);
    expect(await attempt({ name: 'intruder', kind: 'remote_agent', auth: token(KEYS.acme) })).toEqual([
      'auth_failed',
      'a remote_agent passport must name its owner',
      { owner: '' },
    ]);
    expect(await me.hub.findAgentId('intruder')).toBeNull();
  });

  it('a remote agent answers exactly once when the replica holding its call is killed mid-call', async () => {
    const gatekeeper = await idOf('gatekeeper');
    const channel = await me.open({ type: 'consulting', target: 'gatekeeper' });
    await channel.send('who goes there?');
    await waitFor(() => server.calls('/gated') === 1 || undefined, { timeoutMs: 20_000, what: 'the first call' });
    const holderName = server.lastHeaders('/gated')?.['x-replica'];
    const holder = replicas.find((r) => r.name === holderName);
    if (holder === undefined) throw new Error(`no replica named ${String(holderName)}`);
    await holder.stop('SIGKILL');
    // The dead replica's turn lock lapses by the hub's clock, which this file moves by hand.
    await waitFor(
      () => {
        clock.advance(2_000);
        return server.calls('/gated') === 2 || undefined;
      },
      { timeoutMs: 40_000, intervalMs: 500, what: 'the surviving replica to call again' },
    );
    expect(server.lastHeaders('/gated')?.['x-replica']).not.toBe(holderName);
    server.release();
    const answers = await waitFor(
      async () => {
        const own = texts(await logOf(channel.channelId)).filter((e) => e.sender_id === gatekeeper);
        return own.length > 0 ? own : undefined;
      },
      { timeoutMs: 20_000, what: "gatekeeper's answer" },
    );
    expect(answers.map((e) => e.event_data['text'])).toEqual(['gatekeeper heard: who goes there?']);
    const log = await logOf(channel.channelId);
    expect(log.filter((e) => e.sender_id === gatekeeper && e.event_type === EV_TURN_FAILED)).toEqual([]);
  }, 90_000);

  it('a runner that stops with a call in flight cancels the remote task before it exits', async () => {
    server.hold();
    const survivor = replicas.find((r) => r.child.exitCode === null && r.child.signalCode === null);
    if (survivor === undefined) throw new Error('no replica left running');
    const started = () =>
      survivor
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"remote agent task started"'));
    const before = started().length;
    const question = 'are you still there?';
    const ours = (lines: readonly string[]) => lines.filter((line) => line.endsWith(question));
    const channel = await me.open({ type: 'consulting', target: 'gatekeeper' });
    await channel.send(question);
    await waitFor(() => started().length > before || undefined, { timeoutMs: 20_000, what: 'the remote task' });
    // Another delivery may start a remote task of its own meanwhile: wait for the one of this question.
    await waitFor(() => ours(server.heard('/gated')).length === 1 || undefined, {
      timeoutMs: 20_000,
      what: 'the remote task of the question',
    });
    // SIGTERM: the turns in flight get the client's grace (10 s), then are aborted, which cancels the remote task.
    expect(await survivor.stop('SIGTERM')).toBe(0);
    expect(ours(server.cancelledHeard('/gated'))).toHaveLength(1);
    expect(texts(await logOf(channel.channelId)).map((e) => e.event_data['text'])).toEqual(['are you still there?']);
  }, 60_000);
});
