/**
 * Governance in the web console, in headless Chromium: a discussion of ann and two SDK agents on a hub whose clock
 * the test steps (no sweep timer). Late turns break `turn_within` and the hub warns the late speaker (ann first,
 * then an agent), live in ann's and the operator's browsers; an agent's failed turn shows as a failure and ends the
 * channel; a post out of turn shows the hub's `protocol_error`; the operator's audit view lists the violations and
 * filters them by kind, and the hub view shows the active hub.
 */
import type { Bridge } from '@ag2net/bridge';
import { ackInvite, HubClient, silentLogger, type AgentClient } from '@ag2net/client';
import { ModelCallError, ModelFailureCode, reportTurnFailure } from '@ag2net/agent';
import { createManualClock } from '@ag2net/hub';
import { EV_CHANNEL_INVITE, EV_TEXT, type Envelope } from '@ag2net/protocol';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';
import { assertConsoleServed, launchBrowser, type TestBrowser } from './support/browser.js';
import {
  attributesOf,
  envelopes,
  goToHash,
  hashOf,
  navigate,
  signInWithForm,
  waitForChannelState,
  waitForHash,
  waitForText,
} from './support/console-ui.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { startStackBridge } from './support/stack-bridge.js';

const KEYS = { ann: 'k-ann-governance', slow: 'k-slow', flaky: 'k-flaky' } as const;
const OPERATOR_KEY = 'k-operator-console-governance';
/** The discussion's first `turn_within` (warn) threshold, in ms (packages/adapters/src/discussion.ts). */
const TURN_WITHIN_MS = 120_000;
/** What flaky's failed turn says (the model's refusal of its key, as the agent runtime words it). */
const FAILURE_REASON = 'the model rejected the API key';

const SessionReply = z.object({ token: z.string() });
const ChannelReply = z.object({ channel: z.object({ channel_id: z.string() }) });

const clock = createManualClock(Date.now());
let stack: SecuredStack;
let sdk: HubClient | undefined;
let slow: AgentClient;
let bridge: Bridge | undefined;
let browser: TestBrowser | undefined;
let ann: Page;
let operator: Page;
let channelId = '';

/** Accepts invites; otherwise, unless told `fail`, says nothing (a late speaker). */
function agentHandler(options: { readonly fail: boolean }) {
  return async (envelope: Envelope, client: AgentClient): Promise<void> => {
    if (envelope.event_type === EV_CHANNEL_INVITE) {
      await ackInvite(client, envelope);
      return;
    }
    // flaky's turn comes after slow's text: its model refuses its key, and the runtime reports the failed turn.
    if (options.fail && envelope.event_type === EV_TEXT && envelope.sender_id === slow.agentId) {
      const err = new ModelCallError(ModelFailureCode.Auth, FAILURE_REASON, 1);
      await reportTurnFailure(client, envelope, err, silentLogger);
    }
  };
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS, hub: { clock, sweepIntervalMs: 0 } });
  bridge = await startStackBridge(stack, { apiKeys: { ann: KEYS.ann }, operatorKey: OPERATOR_KEY });
  await assertConsoleServed(bridge.url);
  sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  const auth = (name: keyof typeof KEYS) => ({ scheme: 'api_key', claim: { token: KEYS[name] } }) as const;
  slow = await sdk.register({ name: 'slow', auth: auth('slow') }, { handler: agentHandler({ fail: false }) });
  await sdk.register({ name: 'flaky', auth: auth('flaky') }, { handler: agentHandler({ fail: true }) });
  browser = await launchBrowser();
}, 60_000);

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') await browser?.screenshotAll(`failed-${context.task.name.slice(0, 40)}`);
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
  await sdk?.close();
  await stack?.stop();
});

function url(): string {
  if (bridge === undefined) throw new Error('the bridge did not start');
  return bridge.url;
}

function chromium(): TestBrowser {
  if (browser === undefined) throw new Error('Chromium did not start');
  return browser;
}

/** Moves the hub's clock on by `ms` and runs its sweepers once (expectations are evaluated there). */
async function stepClock(ms: number): Promise<void> {
  clock.advance(ms);
  await stack.hub.tick();
}

describe('violations and failures in the web console', { timeout: 120_000 }, () => {
  it('shows ann her late turn as a violation live, and a post out of turn as protocol_error', async () => {
    const session = await call(url(), '/v1/session', { body: { name: 'ann', api_key: KEYS.ann } });
    const token = SessionReply.parse(session.body).token;
    // The discussion's order is ann, slow, flaky: ann speaks first.
    const opened = await call(url(), '/v1/channels', {
      token,
      body: { type: 'discussion', target: ['slow', 'flaky'], intent: 'release review' },
    });
    expect(opened.status).toBe(201);
    channelId = ChannelReply.parse(opened.body).channel.channel_id;

    ann = await chromium().person('ann', `${url()}/#/signin?name=ann&key=${KEYS.ann}`);
    await waitForHash(ann, '#/channels');
    await goToHash(ann, `#/channels/${channelId}`);
    await waitForChannelState(ann, 'active');
    // The console names the signed-in person `you`.
    await ann.getByTestId('turn').filter({ hasText: 'you' }).waitFor();
    operator = await chromium().person('operator', `${url()}/#/signin`);
    await signInWithForm(operator, '$operator', OPERATOR_KEY);
    await goToHash(operator, `#/channels/${channelId}`);
    await waitForChannelState(operator, 'active');

    // Ann lets her turn pass its turn_within: the hub warns her, privately.
    await stepClock(TURN_WITHIN_MS);
    const annWarning = envelopes(ann, { kind: 'violation' });
    expect(await waitForText(annWarning, 'turn_within')).toContain('ann');
    expect(await attributesOf(annWarning, 'data-private')).toEqual(['true']);
    expect(await attributesOf(annWarning, 'data-event-type')).toEqual(['ag2.expectation.violated']);
    await chromium().screenshot(ann, 'violation-ann');

    const text = ann.getByTestId('composer').locator('textarea[name="text"]');
    await text.fill('Let us review the release.');
    await text.press('Enter');
    await waitForText(envelopes(ann, { kind: 'message', sender: 'ann' }), 'Let us review the release.');
    await ann.getByTestId('turn').filter({ hasText: 'slow' }).waitFor();

    // Slow's turn now: ann may not speak again.
    await text.fill('Anyone there?');
    await text.press('Enter');
    const error = ann.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('role')).toBe('alert');
    expect(await error.textContent()).toContain('protocol_error');
    expect(await envelopes(ann, { kind: 'message' }).filter({ hasText: 'Anyone there?' }).count()).toBe(0);
    await chromium().screenshot(ann, 'out-of-turn');
    expect(chromium().pageErrors).toEqual([]);
  });

  it("shows an agent's late turn live, and the failed turn that ends the discussion", async () => {
    // Slow lets its turn pass: the hub warns slow, in the name of the channel's opener, who reads it too.
    await stepClock(TURN_WITHIN_MS);
    for (const page of [ann, operator]) {
      expect(await waitForText(envelopes(page, { kind: 'violation' }).nth(1), 'turn_within')).toContain('slow');
    }
    await chromium().screenshot(ann, 'violation-slow');

    await slow.send(channelId, 'Sorry, I was away.');
    for (const page of [ann, operator]) {
      const failure = envelopes(page, { kind: 'failure', sender: 'flaky' });
      expect(await waitForText(failure, FAILURE_REASON)).toContain('model_auth');
      expect(await attributesOf(failure, 'data-event-type')).toEqual(['ag2.turn.failed']);
      await waitForChannelState(page, 'closed');
      expect(await envelopes(page, { kind: 'violation' }).count()).toBe(2);
    }
    expect(await ann.getByTestId('composer').count()).toBe(0);
    await chromium().screenshot(ann, 'failure-ann');
    await chromium().screenshot(operator, 'failure-operator');
    expect(chromium().pageErrors).toEqual([]);
  });

  it('lists the violations in the audit view, filtered by kind, and shows the hub', async () => {
    await navigate(operator, 'Audit');
    const rows = operator.getByTestId('audit-row');
    await operator.locator('[data-testid="audit-row"][data-kind="expectation_violated"]').nth(1).waitFor();
    expect(await operator.locator('[data-testid="audit-row"][data-kind="expectation_violated"]').count()).toBe(2);
    expect(await attributesOf(rows, 'data-kind')).toContain('turn_failed');
    await chromium().screenshot(operator, 'audit');
    await operator.getByRole('combobox', { name: /kind/i }).selectOption('expectation_violated');
    // Filtered once no row of another kind is left.
    await operator
      .locator('[data-testid="audit-row"]:not([data-kind="expectation_violated"])')
      .first()
      .waitFor({ state: 'detached' });
    expect(await attributesOf(rows, 'data-kind')).toEqual(['expectation_violated', 'expectation_violated']);
    await chromium().screenshot(operator, 'audit-filtered');

    await navigate(operator, 'Hub');
    await operator.getByTestId('hub-health').waitFor();
    await operator.getByTestId('delivery-lag').waitFor();
    const token = SessionReply.parse(
      (await call(url(), '/v1/session', { body: { name: '$operator', api_key: OPERATOR_KEY } })).body,
    ).token;
    if ((await call(url(), '/v1/hub/status', { token })).status === 200) {
      const active = operator.locator(`[data-testid="hub-row"][data-role="active"][data-hub-id="${stack.hub.hubId}"]`);
      await active.waitFor();
      expect(await operator.getByTestId('hub-row').count()).toBe(1);
    }
    await chromium().screenshot(operator, 'hub');
    expect(chromium().pageErrors).toEqual([]);
  });
});

describe('taking part in the web console', { timeout: 120_000 }, () => {
  it("lets ann accept an agent's invite with Accept invite and close the channel", async () => {
    // Resolves once every invitee acked: here, once ann clicks in her browser.
    const opening = slow.open({ type: 'conversation', target: 'ann', intent: 'a quick question' });
    await goToHash(ann, '#/channels');
    const pending = ann.locator('[data-testid="channel-row"][data-state="pending"]');
    await pending.waitFor();
    expect(await attributesOf(pending, 'data-type')).toEqual(['conversation']);
    await pending.getByRole('link').first().click();
    await waitForChannelState(ann, 'pending');
    await chromium().screenshot(ann, 'invite');
    await ann.getByTestId('ack-invite').click();
    const channel = await opening;
    expect(hashOf(ann)).toBe(`#/channels/${channel.channelId}`);
    await waitForChannelState(ann, 'active');
    expect(await ann.getByTestId('ack-invite').count()).toBe(0);

    await ann.getByTestId('close-channel').click();
    await waitForChannelState(ann, 'closed');
    expect((await slow.getChannel(channel.channelId)).state).toBe('closed');
    expect(await ann.getByTestId('composer').count()).toBe(0);
    expect(chromium().pageErrors).toEqual([]);
  });
});
