import { HubClient } from '@ag2net/client';
import { EV_TEXT, EV_TURN_FAILED } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { startHubService, startService, type ServiceProcess } from './support/processes.js';
import { httpGet, parsePromText, sampleValue } from './support/prom-text.js';

const stack = fileStack();
const KEY = 'sk-ops-secret-key-0123456789';
// An OpenAI-compatible endpoint that refuses every key, quoting it back as real providers do.
const endpoint = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
  });
});
let dir = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  dir = await mkdtemp(join(tmpdir(), 'ag2net-runner-ops-'));
});
afterAll(async () => {
  endpoint.close();
  await rm(dir, { recursive: true, force: true });
});

/** The port the service logged it serves `/healthz`, `/readyz` and `/metrics` on. */
function opsPort(service: ServiceProcess): Promise<number> {
  return waitFor(
    () => {
      const line = service
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"serving /healthz, /readyz and /metrics"'));
      const port: unknown = line === undefined ? undefined : (JSON.parse(line) as { port?: unknown }).port;
      return typeof port === 'number' ? port : undefined;
    },
    { timeoutMs: 20_000, what: 'the ops port in the log' },
  );
}

describe('agent-runner operations endpoints', () => {
  it('counts turns, failures by code and tokens per agent, logs a failed turn in one short line, and is ready while its agents consume', async () => {
    const prefix = uniqueName('rops');
    const hubService = stack.track(startHubService({ natsUrl: stack.url, prefix, hubId: 'rops-hub' }));
    const { port } = endpoint.address() as AddressInfo;
    const configPath = join(dir, 'agents.yaml');
    const keyless = `{ provider: openai-compatible, model: m, baseURL: 'http://127.0.0.1:${port}/v1', apiKey: ${KEY} }`;
    await writeFile(
      configPath,
      [
        'agents:',
        '  - { name: keeper, model: { provider: scripted, script: [kept] } }',
        `  - { name: keyless, max_retries: 0, model: ${keyless} }`,
        '',
      ].join('\n'),
    );
    const runner = stack.track(
      startService('runner-ops', 'agent-runner/src/main.ts', [
        configPath,
        '--nats-url',
        stack.url,
        '--prefix',
        prefix,
        '--http-port',
        '0',
      ]),
    );
    const base = `http://127.0.0.1:${await opsPort(runner)}`;
    expect((await httpGet(`${base}/healthz`)).status).toBe(200);
    const ready = await waitFor(
      async () => {
        const r = await httpGet(`${base}/readyz`);
        return r.status === 200 ? r.body : undefined;
      },
      { timeoutMs: 30_000, what: 'the runner ready' },
    );
    expect(JSON.parse(ready)).toEqual({ ready: true, reason: '2 agent(s) consuming' });

    const hub = await HubClient.connect({ servers: stack.url, prefix });
    try {
      const me = await hub.registerHuman({ name: 'me' });
      const keeperId = (await hub.findAgentId('keeper')) ?? '';
      const asked = await me.open({ type: 'consulting', target: 'keeper' });
      await asked.send('keep this');
      const answer = await me.nextEnvelope({
        predicate: (e) => e.event_type === EV_TEXT && e.sender_id === keeperId,
        timeout: 20_000,
      });
      expect(answer?.event_data['text']).toBe('kept');
      const failing = await me.open({ type: 'consulting', target: 'keyless' });
      await failing.send('PROMPT-MARKER what is a log?');
      const notice = await me.nextEnvelope({ predicate: (e) => e.event_type === EV_TURN_FAILED, timeout: 20_000 });
      expect(notice?.event_data['code']).toBe('model_auth');

      const metrics = await waitFor(
        async () => {
          const s = parsePromText((await httpGet(`${base}/metrics`)).body);
          return sampleValue(s, 'ag2net_runner_turns_total', { agent: 'keyless', result: 'failed' }) === 1
            ? s
            : undefined;
        },
        { timeoutMs: 10_000, what: 'the failed turn counted' },
      );
      expect(sampleValue(metrics, 'ag2net_runner_turns_total', { agent: 'keeper', result: 'answered' })).toBe(1);
      expect(sampleValue(metrics, 'ag2net_runner_turn_failures_total', { agent: 'keyless', code: 'model_auth' })).toBe(
        1,
      );
      expect(
        sampleValue(metrics, 'ag2net_runner_turn_duration_seconds_count', { agent: 'keeper', result: 'answered' }),
      ).toBe(1);
      // The scripted model reports no usage: the counters exist at zero, per agent and kind.
      expect(
        metrics
          .filter((s) => s.name === 'ag2net_runner_model_tokens_total')
          .map((s) => [s.labels['agent'], s.labels['kind'], s.value]),
      ).toEqual([
        ['keeper', 'input', 0],
        ['keeper', 'output', 0],
      ]);

      const lines = runner.output().split('\n');
      const failed = lines.filter((l) => l.includes('"msg":"turn failed"'));
      expect(failed).toHaveLength(1);
      expect(JSON.parse(failed[0] ?? '{}')).toMatchObject({
        level: 50,
        agent: 'keyless',
        agentId: await hub.findAgentId('keyless'),
        channel: 'consulting',
        channelId: failing.channelId,
        code: 'model_auth',
        reason: 'the model rejected the API key',
      });
      // The hub logs the reported failure in one short line too, naming the agent and the channel.
      const hubLine = await waitFor(
        () =>
          hubService
            .output()
            .split('\n')
            .find((l) => l.includes('"msg":"turn failed"')),
        { timeoutMs: 10_000, what: "the hub's turn failed line" },
      );
      expect(JSON.parse(hubLine)).toMatchObject({
        level: 40,
        agent: 'keyless',
        agentId: await hub.findAgentId('keyless'),
        channel: 'consulting',
        channelId: failing.channelId,
        // The reason with its one-line cause: the status and the provider's message, its key masked.
        reason: expect.stringMatching(
          /^\w+: the model rejected the API key \(401: Incorrect API key provided: \*\*\*\)$/,
        ) as unknown,
      });
      for (const line of [...lines, ...hubService.output().split('\n')]) {
        expect(line).not.toContain('PROMPT-MARKER');
        expect(line).not.toContain(KEY);
      }
    } finally {
      await hub.close();
    }

    const restarting = stack.nats.restart(5_000);
    const down = await waitFor(
      async () => {
        const r = await httpGet(`${base}/readyz`);
        return r.status === 503 ? r.body : undefined;
      },
      { timeoutMs: 5_000, what: '/readyz 503 while NATS is down' },
    );
    expect(JSON.parse(down)).toEqual({
      ready: false,
      reason: 'NATS connection down for keeper, keyless; reconnecting',
    });
    await restarting;
    await waitFor(async () => (await httpGet(`${base}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      what: '/readyz 200 after NATS came back',
    });
  }, 90_000);
});
