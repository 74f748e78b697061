/**
 * Governance in the web console, in headless Chromium: a discussion of ann and two SDK agents on a hub whose clock
 * the test steps (no sweep timer). Late turns break `turn_within` and the hub warns the late speaker (ann first,
 * then an agent), live in ann's and the operator's browsers; an agent's failed turn shows as a failure and ends the
 * channel; a post out of turn shows the hub's `protocol_error`; the operator's audit view lists the violations and
 * filters them by kind, and the hub view shows the active hub.
 */
import { silentLogger, type AgentClient } from '@ag2net/client';
import { ModelCallError, ModelFailureCode, reportTurnFailure } from '@ag2net/agent';
import { EV_TEXT } from '@ag2net/protocol';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/bridge-http.js';
import { openChannel } from './support/bridge-calls.js';
import { acceptingInvites } from './support/console-agents.js';
import { consoleStackPerFile } from './support/console-stack.js';
import {
  attributesOf,
  envelopes,
  goToHash,
  hashOf,
  navigate,
  say,
  waitForChannelState,
  waitForText,
} from './support/console-ui.js';

/** The discussion's first `turn_within` (warn) threshold, in ms (packages/adapters/src/discussion.ts). */
const TURN_WITHIN_MS = 120_000;
/** What flaky's failed turn says (the model's refusal of its key, as the agent runtime words it). */
const FAILURE_REASON = 'the model rejected the API key';

const stack = consoleStackPerFile({
  people: { ann: 'k-ann-governance' },
  apiKeys: { slow: 'k-slow', flaky: 'k-flaky' },
  operatorKey: 'k-operator-console-governance',
  manualClockAt: Date.now(),
});
let slow: AgentClient;
let ann: Page;
let operator: Page;
let channelId = '';

beforeAll(async () => {
  // Slow says nothing (a late speaker).
  slow = await stack.sdk.register(
    { name: 'slow', auth: stack.auth('slow') },
    { handler: acceptingInvites(() => Promise.resolve()) },
  );
  // Flaky's turn comes after slow's text: its model refuses its key, and the runtime reports the failed turn.
  const flaky = acceptingInvites(async (envelope, client) => {
    if (envelope.event_type !== EV_TEXT || envelope.sender_id !== slow.agentId) return;
    const err = new ModelCallError(ModelFailureCode.Auth, FAILURE_REASON, { attempts: 1 });
    await reportTurnFailure({ client, envelope, error: err }, silentLogger);
  });
  await stack.sdk.register({ name: 'flaky', auth: stack.auth('flaky') }, { handler: flaky });
}, 60_000);

describe('violations and failures in the web console', { timeout: 120_000 }, () => {
  it('shows ann her late turn as a violation live, and a post out of turn as protocol_error', async () => {
    const token = await stack.session('ann');
    // The discussion's order is ann, slow, flaky: ann speaks first.
    const body = { type: 'discussion', target: ['slow', 'flaky'], intent: 'release review' };
    channelId = (await openChannel(stack.url, token, body)).channelId;

    ann = await stack.signIn('ann');
    await goToHash(ann, `#/channels/${channelId}`);
    await waitForChannelState(ann, 'active');
    // The console names the signed-in person `you`.
    await ann.getByTestId('turn').filter({ hasText: 'you' }).waitFor();
    operator = await stack.signInOperator();
    await goToHash(operator, `#/channels/${channelId}`);
    await waitForChannelState(operator, 'active');

    // Ann lets her turn pass its turn_within: the hub warns her, privately.
    await stack.stepClock(TURN_WITHIN_MS);
    const annWarning = envelopes(ann, { kind: 'violation' });
    expect(await waitForText(annWarning, 'turn_within')).toContain('ann');
    expect(await attributesOf(annWarning, 'data-private')).toEqual(['true']);
    expect(await attributesOf(annWarning, 'data-event-type')).toEqual(['ag2.expectation.violated']);
    await stack.browser.screenshot(ann, 'violation-ann');

    await say(ann, 'Let us review the release.');
    await waitForText(envelopes(ann, { kind: 'message', sender: 'ann' }), 'Let us review the release.');
    await ann.getByTestId('turn').filter({ hasText: 'slow' }).waitFor();

    // Slow's turn now: ann may not speak again.
    await say(ann, 'Anyone there?');
    const error = ann.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('role')).toBe('alert');
    expect(await error.textContent()).toContain('protocol_error');
    expect(await envelopes(ann, { kind: 'message' }).filter({ hasText: 'Anyone there?' }).count()).toBe(0);
    await stack.browser.screenshot(ann, 'out-of-turn');
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it("shows an agent's late turn live, and the failed turn that ends the discussion", async () => {
    // Slow lets its turn pass: the hub warns slow, in the name of the channel's opener, who reads it too.
    await stack.stepClock(TURN_WITHIN_MS);
    for (const page of [ann, operator]) {
      expect(await waitForText(envelopes(page, { kind: 'violation' }).nth(1), 'turn_within')).toContain('slow');
    }
    await stack.browser.screenshot(ann, 'violation-slow');

    await slow.send(channelId, 'Sorry, I was away.');
    for (const page of [ann, operator]) {
      const failure = envelopes(page, { kind: 'failure', sender: 'flaky' });
      expect(await waitForText(failure, FAILURE_REASON)).toContain('model_auth');
      expect(await attributesOf(failure, 'data-event-type')).toEqual(['ag2.turn.failed']);
      await waitForChannelState(page, 'closed');
      expect(await envelopes(page, { kind: 'violation' }).count()).toBe(2);
    }
    expect(await ann.getByTestId('composer').count()).toBe(0);
    await stack.browser.screenshot(ann, 'failure-ann');
    await stack.browser.screenshot(operator, 'failure-operator');
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it('lists the violations in the audit view, filtered by kind, and shows the hub', async () => {
    await navigate(operator, 'Audit');
    const rows = operator.getByTestId('audit-row');
    await operator.locator('[data-testid="audit-row"][data-kind="expectation_violated"]').nth(1).waitFor();
    expect(await operator.locator('[data-testid="audit-row"][data-kind="expectation_violated"]').count()).toBe(2);
    expect(await attributesOf(rows, 'data-kind')).toContain('turn_failed');
    await stack.browser.screenshot(operator, 'audit');
    await operator.getByRole('combobox', { name: /kind/i }).selectOption('expectation_violated');
    // Filtered once no row of another kind is left.
    await operator
      .locator('[data-testid="audit-row"]:not([data-kind="expectation_violated"])')
      .first()
      .waitFor({ state: 'detached' });
    expect(await attributesOf(rows, 'data-kind')).toEqual(['expectation_violated', 'expectation_violated']);
    await stack.browser.screenshot(operator, 'audit-filtered');

    await navigate(operator, 'Hub');
    await operator.getByTestId('hub-health').waitFor();
    await operator.getByTestId('delivery-lag').waitFor();
    const token = await stack.session('$operator');
    if ((await call(stack.url, '/v1/hub/status', { token })).status === 200) {
      const active = operator.locator(`[data-testid="hub-row"][data-role="active"][data-hub-id="${stack.hub.hubId}"]`);
      await active.waitFor();
      expect(await operator.getByTestId('hub-row').count()).toBe(1);
    }
    await stack.browser.screenshot(operator, 'hub');
    expect(stack.browser.pageErrors).toEqual([]);
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
    await stack.browser.screenshot(ann, 'invite');
    await ann.getByTestId('ack-invite').click();
    const channel = await opening;
    expect(hashOf(ann)).toBe(`#/channels/${channel.channelId}`);
    await waitForChannelState(ann, 'active');
    expect(await ann.getByTestId('ack-invite').count()).toBe(0);

    await ann.getByTestId('close-channel').click();
    await waitForChannelState(ann, 'closed');
    expect((await slow.getChannel(channel.channelId)).state).toBe('closed');
    expect(await ann.getByTestId('composer').count()).toBe(0);
    expect(stack.browser.pageErrors).toEqual([]);
  });
});
