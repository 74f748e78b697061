/**
 * The web console as a newcomer (lea) meets it, with SDK agents the suite drives: the channel header changes with
 * the transcript, from the channel's stream alone (reads of the metadata held unanswered); the list and the page say
 * one TTL; the list searches and previews channels and changes live with the person's deliveries; agents show as
 * online, last seen or not seen; the Audit link is the operator's; and the pages fit a phone (390×844) and a laptop
 * (1366×768) without scrolling sideways.
 */
import type { AgentClient } from '@ag2net/client';
import type { Clock } from '@ag2net/hub';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from '../support/bridge-http.js';
import { openChannel, untilChannelText } from '../support/bridge-calls.js';
import { PHONE_VIEWPORT } from '../support/browser.js';
import { answeringTexts } from '../support/console-agents.js';
import type { ConsoleStack } from '../support/console-stack.js';
import {
  attributesOf,
  envelopes,
  goToHash,
  holdRequests,
  navigate,
  navLinks,
  openChannelWithForm,
  say,
  textOf,
  waitForChannelState,
  waitForHash,
  waitForText,
} from '../support/console-ui.js';

/** The suite's person, who signs in on the bridge. */
export const LIVE_PEOPLE = { lea: 'k-lea-live' } as const;
/** The suite's agents. */
export const LIVE_AGENT_KEYS = {
  expert: 'k-expert-live',
  pal: 'k-pal-live',
  archivist: 'k-archivist-live',
  lurker: 'k-lurker-live',
} as const;
const ANSWER = 'Raft elects one leader per term, and the leader orders every write.';
/** How far behind the browser's clock the hub's runs while the archivist speaks, in ms. */
const BEFORE_MS = 30 * 60_000;

/** A hub clock the suite can set back: the system's, shifted by `offsetMs`. */
export interface ShiftedClock extends Clock {
  offsetMs: number;
}

/** The system's clock, shifted by nothing until the suite says. */
export function shiftedClock(): ShiftedClock {
  const clock: ShiftedClock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  return clock;
}

/** How far the page and its content box scroll sideways (0: they fit). */
async function sidewaysOverflow(page: Page): Promise<number[]> {
  // A string: the tests' TypeScript has no DOM types (it is evaluated over the DevTools protocol, not by the page).
  const measured = await page.evaluate(`(() => {
    const content = document.querySelector('.content');
    const root = document.documentElement;
    return [root.scrollWidth - root.clientWidth, content === null ? 0 : content.scrollWidth - content.clientWidth];
  })()`);
  return z.array(z.number()).parse(measured);
}

/** Holds every read of the channel's metadata and adapter state (not its stream) until released. */
function holdChannelReads(page: Page, channelId: string) {
  const paths = new Set([`/v1/channels/${channelId}`, `/v1/channels/${channelId}/state`]);
  return holdRequests(page, (u) => paths.has(u.pathname));
}

/** The suite's tests, on `stack` (whose hub runs on `clock`). */
export function liveSuite(stack: ConsoleStack, clock: ShiftedClock): void {
  let pal: AgentClient;
  let token = '';
  let lea: Page;
  /** The channels made along the way, shared by the tests below in order. */
  const made = { consulting: '', old: '', oldAnsweredAt: '' };
  /** Lets the expert answer the question it holds. */
  let releaseExpert: () => void = () => undefined;
  const expertMayAnswer = new Promise<void>((resolve) => {
    releaseExpert = resolve;
  });

  /** Opens a channel as lea through the API; resolves with its id once every invitee accepted. */
  const openAsLea = async (body: Record<string, unknown>): Promise<string> =>
    (await openChannel(stack.url, token, body)).channelId;

  beforeAll(async () => {
    // Half an hour ago (by the hub's clock) the agents registered and lea had a chat with the archivist.
    clock.offsetMs = -BEFORE_MS;
    try {
      await stack.sdk.register(
        { name: 'expert', auth: stack.auth('expert'), provider: 'openai', model: 'gpt-4o-mini' },
        { handler: answeringTexts(() => ANSWER, expertMayAnswer) },
      );
      pal = await stack.sdk.register(
        { name: 'pal', auth: stack.auth('pal') },
        { handler: answeringTexts((t) => `pal heard: ${t}`) },
      );
      await stack.sdk.register(
        { name: 'archivist', auth: stack.auth('archivist') },
        { handler: answeringTexts(() => 'Filed.') },
      );
      await stack.sdk.register(
        { name: 'lurker', auth: stack.auth('lurker') },
        { handler: answeringTexts(() => 'Hm.') },
      );
      token = await stack.session('lea');
      made.old = await openAsLea({ type: 'conversation', target: 'archivist', intent: 'an old chat' });
      await call(stack.url, `/v1/channels/${made.old}/envelopes`, { token, body: { text: 'Please file this.' } });
      made.oldAnsweredAt = await untilChannelText(stack.url, token, { channelId: made.old, text: 'Filed.' });
    } finally {
      clock.offsetMs = 0;
    }
  }, 60_000);

  afterAll(() => stack.browser.closeContexts());

  describe('the channel page, live from one stream', { timeout: 120_000 }, () => {
    it("moves the header with the transcript: the expert's turn, its answer and the close, with every metadata read held", async () => {
      lea = await stack.signIn('lea');
      made.consulting = await openChannelWithForm(lea, {
        type: 'consulting',
        targets: ['expert'],
        intent: 'a question about consensus',
      });
      await waitForChannelState(lea, 'active');
      expect(await textOf(lea.getByTestId('turn'))).toBe('you');

      // From here on no read of the metadata or the adapter state is answered: the header has the stream only.
      const held = await holdChannelReads(lea, made.consulting);
      try {
        await say(lea, 'How does Raft keep one order of writes?');
        await lea.getByTestId('turn').filter({ hasText: 'expert' }).waitFor();
        expect(await textOf(lea.getByTestId('turn'))).toBe('expert');
        await stack.browser.screenshot(lea, 'live-expert-turn');

        releaseExpert();
        await waitForText(envelopes(lea, { sender: 'expert', kind: 'message' }), ANSWER);
        await waitForChannelState(lea, 'closed');
        expect(await textOf(lea.getByTestId('turn'))).toBe('— (closed)');
        expect(await textOf(lea.getByTestId('close-reason'))).toBe('(consulting_complete)');
        expect(await textOf(lea.getByTestId('ttl'))).toBe('—');
        expect(await lea.getByTestId('composer').count()).toBe(0);
        expect(await lea.getByTestId('close-channel').count()).toBe(0);
        await waitForText(envelopes(lea, { 'event-type': 'ag2.channel.closed' }), 'channel closed');
        // The page did ask (after each envelope), and got no answer.
        expect(held.count()).toBeGreaterThan(0);
        await stack.browser.screenshot(lea, 'live-consulting-closed');
      } finally {
        await held.release();
      }
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it('shows a channel the other side closes while it is open as closed at once, with no composer and no Close', async () => {
      const chat = await openAsLea({ type: 'conversation', target: 'pal', intent: 'chat with pal' });
      await goToHash(lea, `#/channels/${chat}`);
      await waitForChannelState(lea, 'active');
      await lea.getByTestId('close-channel').waitFor();
      await lea.getByTestId('composer').waitFor();
      const held = await holdChannelReads(lea, chat);
      try {
        await pal.closeChannel(chat, 'pal_left');
        await waitForChannelState(lea, 'closed');
        expect(await textOf(lea.getByTestId('close-reason'))).toBe('(pal_left)');
        expect(await lea.getByTestId('composer').count()).toBe(0);
        expect(await lea.getByTestId('close-channel').count()).toBe(0);
      } finally {
        await held.release();
      }
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it('says the same TTL on the list and on the page, in hours and minutes', async () => {
      const { channelId: id, createdAt } = await openChannel(stack.url, token, {
        type: 'conversation',
        target: 'pal',
        intent: 'ttl check',
        ttl: '2h',
      });
      const page = await stack.browser.person('lea-clock', stack.signInLink('lea'));
      // The browser's clock stands 61 s after the channel was created: 7 139 s of its 2 h are left.
      await page.clock.setFixedTime(Date.parse(createdAt) + 61_000);
      await waitForHash(page, '#/channels');
      const row = page.locator(`[data-testid="channel-row"][data-channel-id="${id}"]`);
      // Views read the clock when they appear and every 5 s: wait for a reading of the fixed time.
      expect(await waitForText(row.getByTestId('ttl'), 'in 1 h 58 min')).toBe('in 1 h 58 min');
      await row.getByRole('link').first().click();
      await waitForChannelState(page, 'active');
      expect(await waitForText(page.getByTestId('ttl'), 'in 1 h 58 min')).toBe('in 1 h 58 min');
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });

  describe('the channel list: search, previews, live', { timeout: 120_000 }, () => {
    it("finds channels by intent, participant and last message, and previews each with its last message's sender", async () => {
      await goToHash(lea, '#/channels');
      const consulting = lea.locator(`[data-testid="channel-row"][data-channel-id="${made.consulting}"]`);
      expect(await textOf(consulting.getByTestId('channel-preview'))).toBe(`expert: ${ANSWER}`);
      const old = lea.locator(`[data-testid="channel-row"][data-channel-id="${made.old}"]`);
      expect(await textOf(old.getByTestId('channel-preview'))).toBe('archivist: Filed.');
      await stack.browser.screenshot(lea, 'channels-previews');

      const search = lea.getByRole('searchbox', { name: 'Search channels' });
      const rows = lea.getByTestId('channel-row');
      const shownFor = async (query: string): Promise<(string | null)[]> => {
        await search.fill(query);
        return attributesOf(rows, 'data-channel-id');
      };
      expect(await shownFor('consensus')).toEqual([made.consulting]);
      expect(await shownFor('ARCHIVIST')).toEqual([made.old]);
      expect(await shownFor('raft leader')).toEqual([made.consulting]);
      expect(await shownFor('old chat filed')).toEqual([made.old]);
      expect(await shownFor('no such words')).toEqual([]);
      expect(await textOf(lea.getByTestId('empty'))).toBe('No channel matches “no such words”.');
      await stack.browser.screenshot(lea, 'channels-search-empty');
      await search.fill('');
      await consulting.waitFor();
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it("changes a row's preview and state with the person's deliveries, while the list's reads are held", async () => {
      // Pal opens it, so that its close (which the hub writes in the opener's name) is one of lea's deliveries.
      const opening = pal.open({ type: 'conversation', target: 'lea', intent: 'a live row' });
      await goToHash(lea, '#/channels');
      const pending = lea.locator('[data-testid="channel-row"][data-state="pending"]');
      await pending.getByRole('link').first().click();
      await lea.getByTestId('ack-invite').click();
      const chat = (await opening).channelId;
      await waitForChannelState(lea, 'active');
      await goToHash(lea, '#/channels');
      const row = lea.locator(`[data-testid="channel-row"][data-channel-id="${chat}"][data-state="active"]`);
      await row.waitFor();
      expect(await textOf(row.getByTestId('channel-preview'))).toBe('No messages yet');
      const held = await holdRequests(lea, (u) => u.pathname === '/v1/channels');
      try {
        await pal.send(chat, 'Anyone around?');
        await waitForText(row.getByTestId('channel-preview'), 'pal: Anyone around?');
        await pal.closeChannel(chat, 'pal_left');
        const closed = lea.locator(`[data-testid="channel-row"][data-channel-id="${chat}"][data-state="closed"]`);
        await closed.waitFor();
        expect(await textOf(closed.getByTestId('ttl'))).toBe('—');
        expect(await textOf(closed.getByTestId('channel-preview'))).toBe('pal: Anyone around?');
      } finally {
        await held.release();
      }
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });

  describe('who is around, and what a person may open', { timeout: 120_000 }, () => {
    it('shows an agent that just answered as online, one last seen half an hour ago, and one never seen', async () => {
      const page = await stack.signIn('lea', { context: 'lea-agents' });
      // The browser's clock: 30 min and 20 s after the archivist's answer.
      await page.clock.setFixedTime(Date.parse(made.oldAnsweredAt) + BEFORE_MS + 20_000);
      await navigate(page, 'Agents');
      const presence = (name: string) =>
        page.locator(`[data-testid="agent-row"][data-agent-name="${name}"]`).getByTestId('presence');
      await page.locator('[data-testid="agent-row"][data-agent-name="expert"] [data-presence="online"]').waitFor();
      expect(await textOf(presence('expert'))).toBe('online');
      expect(await presence('archivist').getAttribute('data-presence')).toBe('away');
      expect(await textOf(presence('archivist'))).toBe('last seen 30 min ago');
      expect(await presence('lurker').getAttribute('data-presence')).toBe('unseen');
      expect(await textOf(presence('lurker'))).toBe('not seen');
      await stack.browser.screenshot(page, 'agents-presence');

      await page.locator('[data-testid="agent-row"][data-agent-name="archivist"]').getByRole('link').first().click();
      await page.getByTestId('agent-name').filter({ hasText: 'archivist' }).waitFor();
      expect(await textOf(page.getByTestId('presence'))).toBe('last seen 30 min ago');
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it('shows the Audit link to the operator only', async () => {
      expect(await navLinks(lea)).toEqual(['Agents', 'Channels', 'Tasks', 'Hub']);
      const operator = await stack.signInOperator();
      expect(await navLinks(operator)).toEqual(['Agents', 'Channels', 'Tasks', 'Audit', 'Hub']);
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });

  describe('the console on a phone and on a laptop', { timeout: 120_000 }, () => {
    it('fits 390 px: a top bar instead of the sidebar, stacked rows, a transcript whose first line shows at its top', async () => {
      const page = await stack.signIn('lea', { context: 'lea-phone', viewport: PHONE_VIEWPORT });
      await page.getByTestId('channel-row').first().waitFor();
      const nav = await page.locator('nav').boundingBox();
      expect([nav?.x, nav?.y, nav?.width]).toEqual([0, 0, PHONE_VIEWPORT.width]);
      expect(nav === null ? Infinity : nav.height).toBeLessThan(PHONE_VIEWPORT.height / 8);
      expect(await sidewaysOverflow(page)).toEqual([0, 0]);
      await stack.browser.screenshot(page, 'phone-channels');

      await page.getByRole('button', { name: 'New channel' }).click();
      const form = page.getByTestId('new-channel');
      await form.locator('select[name="type"]').selectOption('workflow');
      await form.locator('select[name="slot-triage"]').selectOption('expert');
      await form.locator('select[name="slot-billing"]').selectOption('pal');
      await page.getByTestId('graph-preview').waitFor();
      expect(await sidewaysOverflow(page)).toEqual([0, 0]);
      await stack.browser.screenshot(page, 'phone-new-workflow');

      await goToHash(page, `#/channels/${made.consulting}`);
      await waitForChannelState(page, 'closed');
      await waitForText(envelopes(page, { sender: 'expert' }), ANSWER);
      expect(await sidewaysOverflow(page)).toEqual([0, 0]);
      const transcript = page.getByTestId('transcript');
      await transcript.evaluate('(el) => { el.scrollTop = 0; }');
      const box = await transcript.boundingBox();
      const first = await envelopes(page).first().boundingBox();
      expect(box !== null && first !== null && first.y >= box.y && first.y + first.height <= box.y + box.height).toBe(
        true,
      );
      await stack.browser.screenshot(page, 'phone-channel');

      // Three participants with their online dots wrap within the header.
      const panel = await openAsLea({ type: 'discussion', target: ['expert', 'pal'], intent: 'a three-way chat' });
      await goToHash(page, `#/channels/${panel}`);
      await waitForChannelState(page, 'active');
      await page.getByTestId('composer').waitFor();
      expect(await sidewaysOverflow(page)).toEqual([0, 0]);
      const composer = await page.getByTestId('composer').boundingBox();
      expect(composer !== null && composer.y + composer.height <= PHONE_VIEWPORT.height).toBe(true);
      await stack.browser.screenshot(page, 'phone-discussion');

      await navigate(page, 'Agents');
      await page.getByTestId('agent-row').first().waitFor();
      expect(await sidewaysOverflow(page)).toEqual([0, 0]);
      await stack.browser.screenshot(page, 'phone-agents');
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it('fits 1366×768: the composer on screen under a transcript scrolled to its end', async () => {
      const chat = await openAsLea({ type: 'conversation', target: 'pal', intent: 'a long chat' });
      for (let i = 1; i <= 12; i++) {
        // A conversation takes turns: each post waits for pal's answer.
        const text = `Message ${i} of a long chat.`;
        const answered = untilChannelText(stack.url, token, { channelId: chat, text: `pal heard: ${text}` });
        await call(stack.url, `/v1/channels/${chat}/envelopes`, { token, body: { text } });
        await answered;
      }
      await goToHash(lea, `#/channels/${chat}`);
      await waitForText(envelopes(lea, { sender: 'pal' }), 'pal heard: Message 12 of a long chat.');
      // Lines that arrive while the page is open keep the transcript at its end.
      await say(lea, 'And one more.');
      await waitForText(envelopes(lea, { sender: 'pal' }), 'pal heard: And one more.');
      const transcript = await lea.getByTestId('transcript').boundingBox();
      const composer = await lea.getByTestId('composer').boundingBox();
      const last = await envelopes(lea).last().boundingBox();
      expect(composer !== null && composer.y + composer.height <= 768).toBe(true);
      expect(transcript !== null && last !== null && last.y + last.height <= transcript.y + transcript.height + 1).toBe(
        true,
      );
      expect(await sidewaysOverflow(lea)).toEqual([0, 0]);
      await stack.browser.screenshot(lea, 'laptop-long-chat');
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });
}
