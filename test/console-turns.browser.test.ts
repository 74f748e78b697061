/**
 * What the web console tells a person about each agent turn, in headless Chromium over a secured stack whose agents
 * run the agent runtime's default handler: a scripted agent (marked as scripted wherever its model shows), an agent on
 * an OpenAI-compatible endpoint that fails once and then answers with token counts, and one whose endpoint refuses
 * every connection. The Turns tab reads each answer's turn report (the runtime's duration, the model, tokens,
 * attempts, retries and tool calls) and each failure's cause, attempts and model; the agent list and page show the
 * passport's model.
 */
import { Agent, createModel, createScriptedModel, registerAgent, toolCall } from '@ag2net/agent';
import type { Bridge } from '@ag2net/bridge';
import { HubClient } from '@ag2net/client';
import { EV_TEXT, EV_TURN_FAILED, EnvelopeSchema, TurnReportSchema, type Envelope } from '@ag2net/protocol';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';
import { assertConsoleServed, launchBrowser, type TestBrowser } from './support/browser.js';
import { attributesOf, goToHash, navigate, textOf, waitForChannelState, waitForHash } from './support/console-ui.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { startStackBridge } from './support/stack-bridge.js';

const KEYS = {
  ann: 'k-ann-turns',
  expert: 'k-expert-turns',
  analyst: 'k-analyst-turns',
  broken: 'k-broken-turns',
} as const;
const ANSWER = 'A write-ahead log makes a change durable before it is applied.';
const SCRIPTED_TITLE = 'Scripted model: it answers with canned lines, offline. No language model is called.';

const SessionReply = z.object({ token: z.string() });
const ChannelReply = z.object({ channel: z.object({ channel_id: z.string() }) });
const LogReply = z.object({ envelopes: z.array(EnvelopeSchema) });

let stack: SecuredStack;
let sdk: HubClient | undefined;
let bridge: Bridge | undefined;
let browser: TestBrowser | undefined;
let endpoint: Server | undefined;
let token = '';
let ann: Page;
/** A port nothing listens on: the broken agent's endpoint. */
let closedPort = 0;

/** An OpenAI-compatible endpoint that fails its first call with 503 and answers every later one (312 → 54 tokens). */
async function flakyEndpoint(): Promise<string> {
  let calls = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      const json = { 'content-type': 'application/json' };
      if (calls === 1) {
        res.writeHead(503, json).end(JSON.stringify({ error: { message: 'overloaded' } }));
        return;
      }
      res.writeHead(200, json).end(
        JSON.stringify({
          id: `chatcmpl-${calls}`,
          object: 'chat.completion',
          created: 1767225600,
          model: 'fake-1',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Mostly durable.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1312, completion_tokens: 54, total_tokens: 1366 },
        }),
      );
    });
  });
  endpoint = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** A port that was free a moment ago and has nothing listening on it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  bridge = await startStackBridge(stack, { apiKeys: { ann: KEYS.ann } });
  await assertConsoleServed(bridge.url);
  sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  const auth = (name: keyof typeof KEYS) => ({ scheme: 'api_key', claim: { token: KEYS[name] } }) as const;
  const expert = new Agent({ name: 'expert', model: createScriptedModel([toolCall('peers'), ANSWER], { loop: true }) });
  await registerAgent(sdk, expert, { passport: { auth: auth('expert') } });
  const limits = { retryDelayMs: 1 };
  const analystModel = createModel(
    { provider: 'openai-compatible', model: 'fake-1', baseURL: await flakyEndpoint() },
    limits,
  );
  await registerAgent(sdk, new Agent({ name: 'analyst', model: analystModel }), {
    passport: { auth: auth('analyst') },
  });
  closedPort = await freePort();
  const brokenModel = createModel(
    { provider: 'openai-compatible', model: 'local-1', baseURL: `http://127.0.0.1:${closedPort}/v1` },
    limits,
  );
  await registerAgent(sdk, new Agent({ name: 'broken', model: brokenModel }), { passport: { auth: auth('broken') } });
  token = SessionReply.parse(
    (await call(bridge.url, '/v1/session', { body: { name: 'ann', api_key: KEYS.ann } })).body,
  ).token;
  browser = await launchBrowser();
  ann = await browser.person('ann', `${bridge.url}/#/signin?name=ann&key=${KEYS.ann}`);
  await waitForHash(ann, '#/channels');
}, 60_000);

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') await browser?.screenshotAll(`failed-${context.task.name.slice(0, 40)}`);
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
  await sdk?.close();
  await stack?.stop();
  endpoint?.closeAllConnections();
  await new Promise((resolve) => (endpoint === undefined ? resolve(undefined) : endpoint.close(resolve)));
});

function url(): string {
  if (bridge === undefined) throw new Error('the bridge did not start');
  return bridge.url;
}

function chromium(): TestBrowser {
  if (browser === undefined) throw new Error('Chromium did not start');
  return browser;
}

async function logOf(channelId: string): Promise<Envelope[]> {
  return LogReply.parse((await call(url(), `/v1/channels/${channelId}/log`, { token })).body).envelopes;
}

/** Asks `agent` one question in a consulting channel from the console; resolves with the channel id once it closed. */
async function consult(agent: string, question: string): Promise<string> {
  const opened = await call(url(), '/v1/channels', { token, body: { type: 'consulting', target: agent } });
  expect(opened.status).toBe(201);
  const channelId = ChannelReply.parse(opened.body).channel.channel_id;
  await goToHash(ann, `#/channels/${channelId}`);
  await waitForChannelState(ann, 'active');
  const box = ann.getByTestId('composer').locator('textarea[name="text"]');
  await box.fill(question);
  await box.press('Enter');
  await waitForChannelState(ann, 'closed');
  await ann.getByTestId('tab-turns').click();
  await ann.getByTestId('turn-row').nth(1).waitFor();
  return channelId;
}

/** The texts of one turn row's cells, by column. */
async function cells(row: ReturnType<Page['locator']>, ...labels: string[]): Promise<string[]> {
  return Promise.all(labels.map((label) => textOf(row.locator(`td[data-label="${label}"]`))));
}

describe('the turn timeline, from the turn reports', { timeout: 120_000 }, () => {
  it("shows a scripted agent's turn: the runtime's duration, the scripted model marked, 0 → 0 tokens, 2 model calls and its tool call", async () => {
    const channelId = await consult('expert', 'What does a write-ahead log guarantee?');
    const rows = ann.getByTestId('turn-row');
    expect(await attributesOf(rows, 'data-speaker')).toEqual(['you', 'expert']);
    expect(await attributesOf(rows, 'data-outcome')).toEqual(['answered', 'answered']);
    const answer = (await logOf(channelId)).find((e) => e.event_type === EV_TEXT && e.event_data['text'] === ANSWER);
    const report = TurnReportSchema.parse(answer?.event_data['turn']);
    const expert = rows.nth(1);
    // The duration is the runtime's own measure, as its report says it.
    expect(await attributesOf(rows, 'data-duration-source')).toEqual(['hub', 'agent']);
    expect(await expert.getAttribute('data-duration-ms')).toBe(String(report.duration_ms));
    expect(await cells(expert, 'Model', 'Tokens', 'Attempts')).toEqual(['scripted', '0 → 0', '2 · 1 tool call']);
    expect(await textOf(expert.getByTestId('turn-tool-calls'))).toBe('1 tool call');
    expect(await expert.getByTestId('scripted-badge').getAttribute('title')).toBe(SCRIPTED_TITLE);
    expect(await cells(rows.nth(0), 'Model', 'Tokens', 'Attempts')).toEqual(['person', '—', '—']);
    await chromium().screenshot(ann, 'turns-scripted');
    expect(chromium().pageErrors).toEqual([]);
  });

  it("shows a retried turn's attempts and retry, the endpoint's tokens and the model", async () => {
    await consult('analyst', 'How durable is it?');
    const analyst = ann.getByTestId('turn-row').nth(1);
    expect(await analyst.getAttribute('data-speaker')).toBe('analyst');
    expect(await cells(analyst, 'Model', 'Tokens', 'Attempts')).toEqual([
      'openai-compatible / fake-1',
      '1,312 → 54',
      '2 (1 retry)',
    ]);
    expect(await textOf(analyst.getByTestId('turn-retries'))).toBe('1');
    expect(await analyst.getByTestId('turn-tokens').getAttribute('title')).toBe(
      '1312 tokens in, 54 out, as the provider reported them',
    );
    await chromium().screenshot(ann, 'turns-retried');
    expect(chromium().pageErrors).toEqual([]);
  });

  it("shows a failed turn's reason, cause, attempts and model", async () => {
    const channelId = await consult('broken', 'Anyone there?');
    const failed = ann.locator('[data-testid="turn-row"][data-outcome="failed"]');
    expect(await failed.getAttribute('data-speaker')).toBe('broken');
    expect(await textOf(failed.getByTestId('turn-failure'))).toBe(
      'the model could not be reached after 3 attempts (model_unavailable)' +
        `cause: connection: ECONNREFUSED 127.0.0.1:${closedPort}`,
    );
    // The reason says the attempts already: the detail names the model.
    expect(await textOf(failed.getByTestId('turn-failure-detail'))).toBe('openai-compatible / local-1');
    expect(await cells(failed, 'Model', 'Tokens', 'Attempts')).toEqual([
      'openai-compatible / local-1',
      '—',
      '3 (2 retries)',
    ]);
    expect((await logOf(channelId)).filter((e) => e.event_type === EV_TURN_FAILED)).toHaveLength(1);
    await chromium().screenshot(ann, 'turns-failed-cause');
    expect(chromium().pageErrors).toEqual([]);
  });
});

describe("the agents' models", { timeout: 120_000 }, () => {
  it('lists each agent with its passport model, the scripted one marked, and shows it on the agent page', async () => {
    await navigate(ann, 'Agents');
    const row = (name: string) => ann.locator(`[data-testid="agent-row"][data-agent-name="${name}"]`);
    await row('broken').waitFor();
    const model = (name: string) => textOf(row(name).locator('td[data-label="Model"]'));
    expect([await model('expert'), await model('analyst'), await model('broken')]).toEqual([
      'scripted',
      'openai-compatible / fake-1',
      'openai-compatible / local-1',
    ]);
    expect(await row('expert').getByTestId('scripted-badge').getAttribute('title')).toBe(SCRIPTED_TITLE);
    expect(await row('analyst').getByTestId('scripted-badge').count()).toBe(0);
    await chromium().screenshot(ann, 'agents-models');

    await row('expert').getByRole('link').first().click();
    await waitForHash(ann, /^#\/agents\/[^/]+$/);
    expect(await textOf(ann.getByTestId('agent-model'))).toBe('scripted');
    expect(await ann.getByTestId('agent-model').getByTestId('scripted-badge').getAttribute('title')).toBe(
      SCRIPTED_TITLE,
    );
    await chromium().screenshot(ann, 'agent-scripted');
    expect(chromium().pageErrors).toEqual([]);
  });
});
