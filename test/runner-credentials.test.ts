/**
 * agent-runner on a secured deployment: it connects with the registrant's `.creds` file, registers its agent with
 * the API key as the passport's admission credential, keeps the agent's issued credentials in `--creds-dir`, and a
 * restarted runner attaches to the same identity with them.
 */
import { HubClient, type HumanClient } from '@ag2net/client';
import { EV_TEXT } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRunner, type ServiceProcess } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const CONFIG = 'test/fixtures/e2e/secured-agent.yaml';
const KEYS = { keeper: 'k-keeper', visitor: 'k-visitor' };

let stack: SecuredStack;
let dir: string;
const runners: ServiceProcess[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-runner-creds-'));
});

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop('SIGKILL')));
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
});

function runner(name: string): ServiceProcess {
  const r = startRunner({
    natsUrl: stack.url,
    prefix: stack.prefix,
    configPath: CONFIG,
    name,
    extraArgs: ['--creds', stack.paths.registrantCreds, '--creds-dir', join(dir, 'ids'), '--api-key', KEYS.keeper],
  });
  runners.push(r);
  return r;
}

/** Asks keeper one consulting question as `visitor` and resolves with its answer's text. */
async function ask(visitor: HumanClient, question: string): Promise<unknown> {
  const channel = await visitor.open({ type: 'consulting', target: 'keeper' });
  const answer = visitor.nextEnvelope({
    predicate: (e) => e.channel_id === channel.channelId && e.event_type === EV_TEXT && e.sender_id !== visitor.agentId,
    timeout: 20_000,
  });
  await channel.send(question);
  return (await answer)?.event_data['text'];
}

describe('agent-runner with credentials', () => {
  it('registers its agent with the API key, keeps its credentials at 0600, and attaches to it again after a restart', async () => {
    const first = runner('runner-a');
    await waitFor(() => first.output().includes('runner ready'), { timeoutMs: 30_000, what: 'the runner ready' });
    const credsPath = join(dir, 'ids', 'keeper.creds');
    expect((await stat(credsPath)).mode & 0o777).toBe(0o600);

    await using hub = await HubClient.connect({
      servers: stack.url,
      prefix: stack.prefix,
      creds: stack.registrantCreds,
    });
    const visitor = await hub.registerHuman({
      name: 'visitor',
      auth: { scheme: 'api_key', claim: { token: KEYS.visitor } },
    });
    const keeperId = await visitor.hub.findAgentId('keeper');
    const jwt = /BEGIN NATS USER JWT-+\s+(\S+)/.exec(await readFile(credsPath, 'utf8'))?.[1] ?? '';
    expect(JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'))).toMatchObject({
      name: keeperId,
    });
    expect(await ask(visitor, 'one?')).toBe('first answer');

    expect(await first.stop('SIGTERM')).toBe(0);
    const second = runner('runner-b');
    await waitFor(() => second.output().includes('runner ready'), { timeoutMs: 30_000, what: 'the runner ready' });
    expect(second.output()).toContain(`"agentId":"${keeperId}"`);
    // The restarted runner's script starts over: its first answer comes from the same identity.
    expect(await ask(visitor, 'two?')).toBe('first answer');
    expect(await visitor.hub.findAgentId('keeper')).toBe(keeperId);
  });
});
