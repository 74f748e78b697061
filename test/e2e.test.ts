import { HubClient } from '@ag2net/client';
import {
  EV_CHANNEL_CLOSED,
  EV_PACKET,
  EV_TEXT,
  EV_TURN_FAILED,
  OPERATOR_CALLER,
  type Envelope,
} from '@ag2net/protocol';
import { startNatsServer, uniqueName, waitFor, type NatsServer } from '@ag2net/test-support';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from '../scripts/stack/demo.js';
import { startHubService, startRunner, type ServiceProcess } from './support/processes.js';

let nats: NatsServer;
let services: ServiceProcess[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
});

afterEach(async () => {
  await Promise.all(services.map((s) => s.stop('SIGKILL')));
  services = [];
});

afterAll(async () => {
  await nats.stop();
});

/** A hub-service process on a fresh prefix, serving. Inbox deliveries are redelivered 3 s after a crash. */
async function stack(): Promise<{ prefix: string; hub: HubClient }> {
  const prefix = uniqueName('e2e');
  services.push(
    startHubService({ natsUrl: nats.url, prefix, hubId: 'hub', extraArgs: ['--inbox-ack-wait-ms', '3000'] }),
  );
  const hub = await HubClient.connect({ servers: nats.url, prefix, retryForMs: 30_000 });
  await waitFor(async () => (await hub.health({ timeout: 1000 })).role === 'active', {
    timeoutMs: 30_000,
    what: 'the hub',
  });
  return { prefix, hub };
}

const bodies = (log: readonly Envelope[], sender: string): string[] =>
  log
    .filter((e) => e.sender_id === sender && (e.event_type === EV_TEXT || e.event_type === EV_PACKET))
    .map((e) => String(e.event_data['text'] ?? e.event_data['body']));

describe('end to end across processes', () => {
  it('runs every protocol to its end with a human and LLM agents hosted by two runner replicas', async () => {
    const { prefix, hub } = await stack();
    for (const name of ['runner-a', 'runner-b']) {
      services.push(startRunner({ natsUrl: nats.url, prefix, configPath: 'agent-runner/demo/agents.yaml', name }));
    }
    const lines: string[] = [];
    await runDemo({ natsUrl: nats.url, prefix, say: (l) => void lines.push(l), turnTimeoutMs: 30_000 });
    const text = lines.join('\n');
    expect(text).toContain('· channel closed: consulting_complete');
    expect(text).toContain('· channel closed: resolved');
    expect(text.match(/· channel closed: demo_done/g)).toHaveLength(2);

    const channels = await hub.listChannels({ limit: 100 }, { caller: OPERATOR_CALLER });
    expect(channels.map((c) => [c.manifest.type, c.state, c.close_reason])).toEqual([
      ['consulting', 'closed', 'consulting_complete'],
      ['conversation', 'closed', 'demo_done'],
      ['discussion', 'closed', 'demo_done'],
      ['workflow', 'closed', 'resolved'],
    ]);
    const you = await hub.attachHuman('you');
    const [consulting, conversation, discussion, workflow] = channels;
    const id = async (name: string): Promise<string> => (await hub.findAgentId(name)) ?? name;
    const expert = bodies(await you.readWal(consulting?.channel_id ?? ''), await id('expert'));
    expect(expert).toHaveLength(1);
    expect(bodies(await you.readWal(conversation?.channel_id ?? ''), await id('pal'))).toHaveLength(2);
    const panel = await you.readWal(discussion?.channel_id ?? '');
    expect(panel.filter((e) => e.event_type === EV_TEXT).map((e) => e.sender_id)).toEqual([
      you.agentId,
      await id('critic'),
      await id('optimist'),
      you.agentId,
    ]);
    const flow = await you.readWal(workflow?.channel_id ?? '');
    const packets = flow.filter((e) => e.event_type === EV_PACKET);
    expect(packets.map((e) => [e.sender_id, (e.event_data['routing'] as { kind: string }).kind])).toEqual([
      [await id('triage'), 'handoff'],
      [await id('billing'), 'finish'],
    ]);
    await hub.close();
  }, 120_000);

  it('answers a turn exactly once when the runner is killed in the middle of it and a replica takes over', async () => {
    const { prefix, hub } = await stack();
    const first = startRunner({
      natsUrl: nats.url,
      prefix,
      configPath: 'test/fixtures/e2e/slow-agent.yaml',
      name: 'first',
    });
    services.push(first);
    await waitFor(async () => (await hub.findAgentId('slowpoke')) !== null, { timeoutMs: 30_000, what: 'slowpoke' });
    const you = await hub.registerHuman({ name: 'asker' });
    const channel = await you.open({ type: 'consulting', target: 'slowpoke' });
    await channel.send('What are logs?');
    await waitFor(() => first.output().includes('SLOW-TOOL-STARTED'), { timeoutMs: 30_000, what: 'the turn to start' });
    await first.stop('SIGKILL');

    const second = startRunner({
      natsUrl: nats.url,
      prefix,
      configPath: 'test/fixtures/e2e/slow-agent.yaml',
      name: 'second',
    });
    services.push(second);
    const closed = await you.waitForChannelEvent(channel.channelId, { timeout: 60_000 });
    expect(closed?.event_data['reason']).toBe('consulting_complete');
    expect(second.output()).toContain('SLOW-TOOL-STARTED');
    const slowpoke = (await hub.findAgentId('slowpoke')) ?? '';
    const log = await you.readWal(channel.channelId);
    expect(bodies(log, slowpoke)).toEqual(['Logs are append-only.']);
    expect(log.filter((e) => e.event_type === EV_CHANNEL_CLOSED)).toHaveLength(1);
    await hub.close();
  }, 120_000);

  it('delivers what a human missed while disconnected once it reconnects, exactly once', async () => {
    const { prefix, hub } = await stack();
    services.push(
      startRunner({ natsUrl: nats.url, prefix, configPath: 'agent-runner/demo/agents.yaml', name: 'runner' }),
    );
    await waitFor(async () => (await hub.findAgentId('expert')) !== null, { timeoutMs: 30_000, what: 'expert' });
    const first = await HubClient.connect({ servers: nats.url, prefix });
    const me = await first.registerHuman({ name: 'me' });
    const channel = await me.open({ type: 'consulting', target: 'expert' });
    await channel.send('What does a write-ahead log guarantee?');
    await first.close();

    await waitFor(
      async () => (await hub.getChannel(channel.channelId, { caller: OPERATOR_CALLER })).state === 'closed',
      {
        timeoutMs: 30_000,
        what: 'the answer while the human is away',
      },
    );
    const again = await HubClient.connect({ servers: nats.url, prefix });
    const back = await again.attachHuman('me');
    const deliveries = back.subscribe(); // before any other await: sees every delivery of the attach
    const got: Envelope[] = [];
    for (;;) {
      const e = await deliveries.receive({ timeout: 2000 }).catch(() => null);
      if (e === null) break;
      got.push(e);
    }
    const mine = got.filter((e) => e.channel_id === channel.channelId);
    expect(mine.map((e) => e.event_type)).toEqual([EV_TEXT, EV_CHANNEL_CLOSED]);
    expect(mine[0]?.sender_id).toBe(await hub.findAgentId('expert'));
    await again.close();
    await hub.close();
  }, 120_000);

  it('tells the person at once when the runner’s model rejects the key, and logs one short line', async () => {
    const { prefix, hub } = await stack();
    const key = 'sk-e2e-secret-key-0123456789';
    const marker = 'PROMPT-MARKER';
    // An OpenAI-compatible endpoint that refuses every key, quoting it back as real providers do.
    const endpoint = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } }));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const dir = await mkdtemp(join(tmpdir(), 'ag2net-e2e-'));
    try {
      const { port } = endpoint.address() as AddressInfo;
      const configPath = join(dir, 'agents.yaml');
      const model = `{ provider: openai-compatible, model: m, baseURL: 'http://127.0.0.1:${port}/v1', apiKey: ${key} }`;
      await writeFile(configPath, `agents:\n  - { name: keyless, max_retries: 0, model: ${model} }\n`);
      const runner = startRunner({ natsUrl: nats.url, prefix, configPath, name: 'runner-keyless' });
      services.push(runner);
      await waitFor(async () => (await hub.findAgentId('keyless')) !== null, { what: 'the agent', timeoutMs: 30_000 });

      const me = await hub.registerHuman({ name: 'me' });
      const channel = await me.open({ type: 'consulting', target: 'keyless' });
      await channel.send(`${marker}: ${'what does a write-ahead log guarantee? '.repeat(200)}`);
      const notice = await me.nextEnvelope({ predicate: (e) => e.event_type === EV_TURN_FAILED, timeout: 30_000 });
      expect(notice?.event_data).toEqual({
        agent_name: 'keyless',
        reason: 'the model rejected the API key',
        code: 'model_auth',
        cause: { kind: 'http', exc_type: 'APICallError', status: 401, message: 'Incorrect API key provided: ***' },
        attempts: 1,
        provider: 'openai-compatible',
        model: 'm',
      });

      await waitFor(() => runner.output().includes('"msg":"turn failed"'), { what: 'the log line', timeoutMs: 10_000 });
      const line =
        runner
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"turn failed"')) ?? '';
      expect(JSON.parse(line)).toMatchObject({
        level: 50,
        name: 'agent-runner',
        agent: 'keyless',
        channelId: channel.channelId,
        code: 'model_auth',
        reason: 'the model rejected the API key',
        cause: { kind: 'http', status: 401 },
      });
      // One short line: the cause, never the prompt or the key.
      expect(line.length).toBeLessThan(600);
      expect(runner.output()).not.toContain(marker);
      expect(runner.output()).not.toContain(key);
    } finally {
      endpoint.closeAllConnections();
      await new Promise((resolve) => endpoint.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
