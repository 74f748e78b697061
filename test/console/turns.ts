/**
 * What the web console tells a person (tom) about each agent turn, with agents that run the agent runtime's default
 * handler: a scripted agent (the scribe, marked as scripted wherever its model shows), an agent on an
 * OpenAI-compatible endpoint that fails once and then answers with token counts, and one whose endpoint refuses every
 * connection. The Turns tab reads each answer's turn report (the runtime's duration, the model, tokens, attempts,
 * retries and tool calls) and each failure's cause, attempts and model; the agent list and page show the passport's
 * model.
 */
import { Agent, createModel, createScriptedModel, registerAgent, toolCall } from '@ag2net/agent';
import { EV_TEXT, EV_TURN_FAILED, TurnReportSchema } from '@ag2net/protocol';
import { closedPort, startModelEndpoint, type ModelEndpoint } from '@ag2net/test-support';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelLog, openChannel } from '../support/bridge-calls.js';
import type { ConsoleStack } from '../support/console-stack.js';
import {
  attributesOf,
  goToHash,
  navigate,
  say,
  textOf,
  waitForChannelState,
  waitForHash,
} from '../support/console-ui.js';

/** The suite's person, who signs in on the bridge. */
export const TURNS_PEOPLE = { tom: 'k-tom-turns' } as const;
/** The suite's agents. */
export const TURNS_AGENT_KEYS = {
  scribe: 'k-scribe-turns',
  analyst: 'k-analyst-turns',
  broken: 'k-broken-turns',
} as const;
const ANSWER = 'A write-ahead log makes a change durable before it is applied.';
const SCRIPTED_TITLE = 'Scripted model: it answers with canned lines, offline. No language model is called.';

/** The texts of one turn row's cells, by column. */
async function cells(row: Locator, ...labels: string[]): Promise<string[]> {
  return Promise.all(labels.map((label) => textOf(row.locator(`td[data-label="${label}"]`))));
}

/** The suite's tests, on `stack`. */
export function turnsSuite(stack: ConsoleStack): void {
  let endpoint: ModelEndpoint | undefined;
  let token = '';
  let tom: Page;
  /** A port nothing listens on: the broken agent's endpoint. */
  let brokenPort = 0;

  beforeAll(async () => {
    const scribe = new Agent({
      name: 'scribe',
      model: createScriptedModel([toolCall('peers'), ANSWER], { loop: true }),
    });
    await registerAgent(stack.sdk, scribe, { passport: { auth: stack.auth('scribe') } });
    const limits = { retryDelayMs: 1 };
    // The analyst's endpoint fails its first call with 503 and answers every later one (1 312 → 54 tokens).
    endpoint = await startModelEndpoint({
      content: 'Mostly durable.',
      usage: { promptTokens: 1312, completionTokens: 54 },
    });
    const analystModel = createModel(
      { provider: 'openai-compatible', model: 'fake-1', baseURL: endpoint.baseURL },
      limits,
    );
    await registerAgent(stack.sdk, new Agent({ name: 'analyst', model: analystModel }), {
      passport: { auth: stack.auth('analyst') },
    });
    brokenPort = await closedPort();
    const brokenModel = createModel(
      { provider: 'openai-compatible', model: 'local-1', baseURL: `http://127.0.0.1:${brokenPort}/v1` },
      limits,
    );
    await registerAgent(stack.sdk, new Agent({ name: 'broken', model: brokenModel }), {
      passport: { auth: stack.auth('broken') },
    });
    token = await stack.session('tom');
    tom = await stack.signIn('tom');
  }, 60_000);

  afterAll(async () => {
    await stack.browser.closeContexts();
    await endpoint?.close();
  });

  /** Asks `agent` one question in a consulting channel from the console; resolves with the channel id once it closed. */
  async function consult(agent: string, question: string): Promise<string> {
    const { channelId } = await openChannel(stack.url, token, { type: 'consulting', target: agent });
    await goToHash(tom, `#/channels/${channelId}`);
    await waitForChannelState(tom, 'active');
    await say(tom, question);
    await waitForChannelState(tom, 'closed');
    await tom.getByTestId('tab-turns').click();
    await tom.getByTestId('turn-row').nth(1).waitFor();
    return channelId;
  }

  describe('the turn timeline, from the turn reports', { timeout: 120_000 }, () => {
    it("shows a scripted agent's turn: the runtime's duration, the scripted model marked, 0 → 0 tokens, 2 model calls and its tool call", async () => {
      const channelId = await consult('scribe', 'What does a write-ahead log guarantee?');
      const rows = tom.getByTestId('turn-row');
      expect(await attributesOf(rows, 'data-speaker')).toEqual(['you', 'scribe']);
      expect(await attributesOf(rows, 'data-outcome')).toEqual(['answered', 'answered']);
      const answer = (await channelLog(stack.url, token, channelId)).find(
        (e) => e.event_type === EV_TEXT && e.event_data['text'] === ANSWER,
      );
      const report = TurnReportSchema.parse(answer?.event_data['turn']);
      const scribe = rows.nth(1);
      // The duration is the runtime's own measure, as its report says it.
      expect(await attributesOf(rows, 'data-duration-source')).toEqual(['hub', 'agent']);
      expect(await scribe.getAttribute('data-duration-ms')).toBe(String(report.duration_ms));
      expect(await cells(scribe, 'Model', 'Tokens', 'Attempts')).toEqual(['scripted', '0 → 0', '2 · 1 tool call']);
      expect(await textOf(scribe.getByTestId('turn-tool-calls'))).toBe('1 tool call');
      expect(await scribe.getByTestId('scripted-badge').getAttribute('title')).toBe(SCRIPTED_TITLE);
      expect(await cells(rows.nth(0), 'Model', 'Tokens', 'Attempts')).toEqual(['person', '—', '—']);
      await stack.browser.screenshot(tom, 'turns-scripted');
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it("shows a retried turn's attempts and retry, the endpoint's tokens and the model", async () => {
      await consult('analyst', 'How durable is it?');
      const analyst = tom.getByTestId('turn-row').nth(1);
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
      await stack.browser.screenshot(tom, 'turns-retried');
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it("shows a failed turn's reason, cause, attempts and model", async () => {
      const channelId = await consult('broken', 'Anyone there?');
      const failed = tom.locator('[data-testid="turn-row"][data-outcome="failed"]');
      expect(await failed.getAttribute('data-speaker')).toBe('broken');
      expect(await textOf(failed.getByTestId('turn-failure'))).toBe(
        'the model could not be reached after 3 attempts (model_unavailable)' +
          `cause: connection: ECONNREFUSED 127.0.0.1:${brokenPort}`,
      );
      // The reason says the attempts already: the detail names the model.
      expect(await textOf(failed.getByTestId('turn-failure-detail'))).toBe('openai-compatible / local-1');
      expect(await cells(failed, 'Model', 'Tokens', 'Attempts')).toEqual([
        'openai-compatible / local-1',
        '—',
        '3 (2 retries)',
      ]);
      expect(
        (await channelLog(stack.url, token, channelId)).filter((e) => e.event_type === EV_TURN_FAILED),
      ).toHaveLength(1);
      await stack.browser.screenshot(tom, 'turns-failed-cause');
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });

  describe("the agents' models", { timeout: 120_000 }, () => {
    it('lists each agent with its passport model, the scripted one marked, and shows it on the agent page', async () => {
      await navigate(tom, 'Agents');
      const row = (name: string) => tom.locator(`[data-testid="agent-row"][data-agent-name="${name}"]`);
      await row('broken').waitFor();
      const model = (name: string) => textOf(row(name).locator('td[data-label="Model"]'));
      expect([await model('scribe'), await model('analyst'), await model('broken')]).toEqual([
        'scripted',
        'openai-compatible / fake-1',
        'openai-compatible / local-1',
      ]);
      expect(await row('scribe').getByTestId('scripted-badge').getAttribute('title')).toBe(SCRIPTED_TITLE);
      expect(await row('analyst').getByTestId('scripted-badge').count()).toBe(0);
      await stack.browser.screenshot(tom, 'agents-models');

      await row('scribe').getByRole('link').first().click();
      await waitForHash(tom, /^#\/agents\/[^/]+$/);
      expect(await textOf(tom.getByTestId('agent-model'))).toBe('scripted');
      expect(await tom.getByTestId('agent-model').getByTestId('scripted-badge').getAttribute('title')).toBe(
        SCRIPTED_TITLE,
      );
      await stack.browser.screenshot(tom, 'agent-scripted');
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });
}
