/**
 * The web console as a newcomer meets it, in headless Chromium over a secured stack with SDK agents the test drives:
 * the channel header changes with the transcript, from the channel's stream alone (reads of the metadata held
 * unanswered); the list and the page say one TTL; the list searches and previews channels and changes live with the
 * person's deliveries; agents show as online, last seen or not seen; the Audit link is the operator's; and the pages
 * fit a phone (390×844) and a laptop (1366×768) without scrolling sideways.
 */
import type { Bridge } from '@ag2net/bridge';
import { ackInvite, HubClient, type AgentClient } from '@ag2net/client';
import type { Clock } from '@ag2net/hub';
import { EV_CHANNEL_INVITE, EV_TEXT, EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, openSse } from './support/bridge-http.js';
import { assertConsoleServed, launchBrowser, PHONE_VIEWPORT, type TestBrowser } from './support/browser.js';
import {
  attributesOf,
  envelopes,
  goToHash,
  holdRequests,
  navigate,
  navLinks,
  signInWithForm,
  textOf,
  waitForChannelState,
  waitForHash,
  waitForText,
} from './support/console-ui.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { startStackBridge } from './support/stack-bridge.js';

const KEYS = {
  ann: 'k-ann-live',
  expert: 'k-expert-live',
  pal: 'k-pal-live',
  archivist: 'k-archivist-live',
  lurker: 'k-lurker-live',
} as const;
const OPERATOR_KEY = 'k-operator-console-live';
const ANSWER = 'Raft elects one leader per term, and the leader orders every write.';
/** How far behind the browser's clock the hub's runs while the archivist speaks, in ms. */
const BEFORE_MS = 30 * 60_000;

const SessionReply = z.object({ token: z.string() });
const ChannelReply = z.object({ channel: z.object({ channel_id: z.string(), created_at: z.string() }) });

/** The hub's clock: the system's, shifted by `offset` ms (the archivist's chat happens half an hour ago). */
let offset = -BEFORE_MS;
const clock: Clock = { now: () => Date.now() + offset };

let stack: SecuredStack;
let sdk: HubClient | undefined;
let pal: AgentClient;
let bridge: Bridge | undefined;
let browser: TestBrowser | undefined;
let token = '';
let ann: Page;
/** The channels made along the way, shared by the tests below in order. */
const made = { consulting: '', old: '', oldAnsweredAt: '' };
/** Lets the expert answer the question it holds. */
let releaseExpert: () => void = () => undefined;
const expertMayAnswer = new Promise<void>((resolve) => {
  releaseExpert = resolve;
});

/** Accepts invites and answers a text addressed to it with `answer(text)`, once `ready` resolved. */
function answering(answer: (text: string) => string, ready: Promise<void> = Promise.resolve()) {
  return async (envelope: Envelope, client: AgentClient): Promise<void> => {
    if (envelope.event_type === EV_CHANNEL_INVITE) {
      await ackInvite(client, envelope);
      return;
    }
    if (envelope.event_type !== EV_TEXT || envelope.sender_id === client.agentId) return;
    await ready;
    await client.send(envelope.channel_id, answer(String(envelope.event_data['text'])), {
      causationId: envelope.envelope_id,
    });
  };
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS, hub: { clock } });
  bridge = await startStackBridge(stack, { apiKeys: { ann: KEYS.ann }, operatorKey: OPERATOR_KEY });
  await assertConsoleServed(bridge.url);
  sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  const auth = (name: keyof typeof KEYS) => ({ scheme: 'api_key', claim: { token: KEYS[name] } }) as const;
  await sdk.register(
    { name: 'expert', auth: auth('expert'), provider: 'openai', model: 'gpt-4o-mini' },
    { handler: answering(() => ANSWER, expertMayAnswer) },
  );
  pal = await sdk.register({ name: 'pal', auth: auth('pal') }, { handler: answering((t) => `pal heard: ${t}`) });
  await sdk.register({ name: 'archivist', auth: auth('archivist') }, { handler: answering(() => 'Filed.') });
  await sdk.register({ name: 'lurker', auth: auth('lurker') }, { handler: answering(() => 'Hm.') });
  token = SessionReply.parse(
    (await call(bridge.url, '/v1/session', { body: { name: 'ann', api_key: KEYS.ann } })).body,
  ).token;

  // Half an hour ago (by the hub's clock) ann had a chat with the archivist.
  made.old = await openChannel({ type: 'conversation', target: 'archivist', intent: 'an old chat' });
  await call(bridge.url, `/v1/channels/${made.old}/envelopes`, { token, body: { text: 'Please file this.' } });
  made.oldAnsweredAt = await untilText(made.old, 'Filed.');
  offset = 0;
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

/** Opens a channel as ann through the API; resolves with its id once every invitee accepted. */
async function openChannel(body: Record<string, unknown>): Promise<string> {
  const opened = await call(url(), '/v1/channels', { token, body });
  expect(opened.status).toBe(201);
  return ChannelReply.parse(opened.body).channel.channel_id;
}

/** Waits on the channel's stream (as ann) for a text saying `text`; resolves with its `created_at`. */
async function untilText(channelId: string, text: string): Promise<string> {
  const stream = await openSse(`${url()}/v1/channels/${channelId}/stream`, { authorization: `Bearer ${token}` });
  try {
    for (;;) {
      const event = await stream.next();
      const envelope = event.event === 'envelope' ? EnvelopeSchema.parse(event.data) : null;
      if (envelope?.event_data['text'] === text) return envelope.created_at;
    }
  } finally {
    stream.close();
  }
}

/** Holds every read of the channel's metadata and adapter state (not its stream) until released. */
function holdChannelReads(page: Page, channelId: string) {
  const paths = new Set([`/v1/channels/${channelId}`, `/v1/channels/${channelId}/state`]);
  return holdRequests(page, (u) => paths.has(u.pathname));
}

describe('the channel page, live from one stream', { timeout: 120_000 }, () => {
  it("moves the header with the transcript: the expert's turn, its answer and the close, with every metadata read held", async () => {
    ann = await chromium().person('ann', `${url()}/#/signin?name=ann&key=${KEYS.ann}`);
    await waitForHash(ann, '#/channels');
    await ann.getByRole('button', { name: 'New channel' }).click();
    const form = ann.getByTestId('new-channel');
    await form.locator('select[name="type"]').selectOption('consulting');
    await form.locator('input[type="checkbox"][name="target"][value="expert"]').check();
    await form.locator('input[name="intent"]').fill('a question about consensus');
    await form.getByRole('button', { name: 'Open' }).click();
    made.consulting = (await waitForHash(ann, /^#\/channels\/[^/]+$/)).slice('#/channels/'.length);
    await waitForChannelState(ann, 'active');
    expect(await textOf(ann.getByTestId('turn'))).toBe('you');

    // From here on no read of the metadata or the adapter state is answered: the header has the stream only.
    const held = await holdChannelReads(ann, made.consulting);
    try {
      const text = ann.getByTestId('composer').locator('textarea[name="text"]');
      await text.fill('How does Raft keep one order of writes?');
      await text.press('Enter');
      await ann.getByTestId('turn').filter({ hasText: 'expert' }).waitFor();
      expect(await textOf(ann.getByTestId('turn'))).toBe('expert');
      await chromium().screenshot(ann, 'live-expert-turn');

      releaseExpert();
      await waitForText(envelopes(ann, { sender: 'expert', kind: 'message' }), ANSWER);
      await waitForChannelState(ann, 'closed');
      expect(await textOf(ann.getByTestId('turn'))).toBe('— (closed)');
      expect(await textOf(ann.getByTestId('close-reason'))).toBe('(consulting_complete)');
      expect(await textOf(ann.getByTestId('ttl'))).toBe('—');
      expect(await ann.getByTestId('composer').count()).toBe(0);
      expect(await ann.getByTestId('close-channel').count()).toBe(0);
      await waitForText(envelopes(ann, { 'event-type': 'ag2.channel.closed' }), 'channel closed');
      // The page did ask (after each envelope), and got no answer.
      expect(held.count()).toBeGreaterThan(0);
      await chromium().screenshot(ann, 'live-consulting-closed');
    } finally {
      await held.release();
    }
    expect(chromium().pageErrors).toEqual([]);
  });

  it('shows a channel the other side closes while it is open as closed at once, with no composer and no Close', async () => {
    const chat = await openChannel({ type: 'conversation', target: 'pal', intent: 'chat with pal' });
    await goToHash(ann, `#/channels/${chat}`);
    await waitForChannelState(ann, 'active');
    await ann.getByTestId('close-channel').waitFor();
    await ann.getByTestId('composer').waitFor();
    const held = await holdChannelReads(ann, chat);
    try {
      await pal.closeChannel(chat, 'pal_left');
      await waitForChannelState(ann, 'closed');
      expect(await textOf(ann.getByTestId('close-reason'))).toBe('(pal_left)');
      expect(await ann.getByTestId('composer').count()).toBe(0);
      expect(await ann.getByTestId('close-channel').count()).toBe(0);
    } finally {
      await held.release();
    }
    expect(chromium().pageErrors).toEqual([]);
  });

  it('says the same TTL on the list and on the page, in hours and minutes', async () => {
    const opened = await call(url(), '/v1/channels', {
      token,
      body: { type: 'conversation', target: 'pal', intent: 'ttl check', ttl: '2h' },
    });
    const { channel_id: id, created_at: createdAt } = ChannelReply.parse(opened.body).channel;
    const page = await chromium().person('ann-clock', `${url()}/#/signin?name=ann&key=${KEYS.ann}`);
    // The browser's clock stands 61 s after the channel was created: 7 139 s of its 2 h are left.
    await page.clock.setFixedTime(Date.parse(createdAt) + 61_000);
    await waitForHash(page, '#/channels');
    const row = page.locator(`[data-testid="channel-row"][data-channel-id="${id}"]`);
    // Views read the clock when they appear and every 5 s: wait for a reading of the fixed time.
    expect(await waitForText(row.getByTestId('ttl'), 'in 1 h 58 min')).toBe('in 1 h 58 min');
    await row.getByRole('link').first().click();
    await waitForChannelState(page, 'active');
    expect(await waitForText(page.getByTestId('ttl'), 'in 1 h 58 min')).toBe('in 1 h 58 min');
    expect(chromium().pageErrors).toEqual([]);
  });
});

describe('the channel list: search, previews, live', { timeout: 120_000 }, () => {
  it("finds channels by intent, participant and last message, and previews each with its last message's sender", async () => {
    await goToHash(ann, '#/channels');
    const consulting = ann.locator(`[data-testid="channel-row"][data-channel-id="${made.consulting}"]`);
    expect(await textOf(consulting.getByTestId('channel-preview'))).toBe(`expert: ${ANSWER}`);
    const old = ann.locator(`[data-testid="channel-row"][data-channel-id="${made.old}"]`);
    expect(await textOf(old.getByTestId('channel-preview'))).toBe('archivist: Filed.');
    await chromium().screenshot(ann, 'channels-previews');

    const search = ann.getByRole('searchbox', { name: 'Search channels' });
    const rows = ann.getByTestId('channel-row');
    const shownFor = async (query: string): Promise<(string | null)[]> => {
      await search.fill(query);
      return attributesOf(rows, 'data-channel-id');
    };
    expect(await shownFor('consensus')).toEqual([made.consulting]);
    expect(await shownFor('ARCHIVIST')).toEqual([made.old]);
    expect(await shownFor('raft leader')).toEqual([made.consulting]);
    expect(await shownFor('old chat filed')).toEqual([made.old]);
    expect(await shownFor('no such words')).toEqual([]);
    expect(await textOf(ann.getByTestId('empty'))).toBe('No channel matches “no such words”.');
    await chromium().screenshot(ann, 'channels-search-empty');
    await search.fill('');
    await consulting.waitFor();
    expect(chromium().pageErrors).toEqual([]);
  });

  it("changes a row's preview and state with the person's deliveries, while the list's reads are held", async () => {
    // Pal opens it, so that its close (which the hub writes in the opener's name) is one of ann's deliveries.
    const opening = pal.open({ type: 'conversation', target: 'ann', intent: 'a live row' });
    await goToHash(ann, '#/channels');
    const pending = ann.locator('[data-testid="channel-row"][data-state="pending"]');
    await pending.getByRole('link').first().click();
    await ann.getByTestId('ack-invite').click();
    const chat = (await opening).channelId;
    await waitForChannelState(ann, 'active');
    await goToHash(ann, '#/channels');
    const row = ann.locator(`[data-testid="channel-row"][data-channel-id="${chat}"][data-state="active"]`);
    await row.waitFor();
    expect(await textOf(row.getByTestId('channel-preview'))).toBe('No messages yet');
    const held = await holdRequests(ann, (u) => u.pathname === '/v1/channels');
    try {
      await pal.send(chat, 'Anyone around?');
      await waitForText(row.getByTestId('channel-preview'), 'pal: Anyone around?');
      await pal.closeChannel(chat, 'pal_left');
      const closed = ann.locator(`[data-testid="channel-row"][data-channel-id="${chat}"][data-state="closed"]`);
      await closed.waitFor();
      expect(await textOf(closed.getByTestId('ttl'))).toBe('—');
      expect(await textOf(closed.getByTestId('channel-preview'))).toBe('pal: Anyone around?');
    } finally {
      await held.release();
    }
    expect(chromium().pageErrors).toEqual([]);
  });
});

describe('who is around, and what a person may open', { timeout: 120_000 }, () => {
  it('shows an agent that just answered as online, one last seen half an hour ago, and one never seen', async () => {
    const page = await chromium().person('ann-agents', `${url()}/#/signin?name=ann&key=${KEYS.ann}`);
    await waitForHash(page, '#/channels');
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
    await chromium().screenshot(page, 'agents-presence');

    await page.locator('[data-testid="agent-row"][data-agent-name="archivist"]').getByRole('link').first().click();
    await page.getByTestId('agent-name').filter({ hasText: 'archivist' }).waitFor();
    expect(await textOf(page.getByTestId('presence'))).toBe('last seen 30 min ago');
    expect(chromium().pageErrors).toEqual([]);
  });

  it('shows the Audit link to the operator only', async () => {
    expect(await navLinks(ann)).toEqual(['Agents', 'Channels', 'Tasks', 'Hub']);
    const operator = await chromium().person('operator', `${url()}/#/signin`);
    await signInWithForm(operator, '$operator', OPERATOR_KEY);
    expect(await navLinks(operator)).toEqual(['Agents', 'Channels', 'Tasks', 'Audit', 'Hub']);
    expect(chromium().pageErrors).toEqual([]);
  });
});

describe('the console on a phone and on a laptop', { timeout: 120_000 }, () => {
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

  it('fits 390 px: a top bar instead of the sidebar, stacked rows, a transcript whose first line shows at its top', async () => {
    const page = await chromium().person('ann-phone', `${url()}/#/signin?name=ann&key=${KEYS.ann}`, {
      viewport: PHONE_VIEWPORT,
    });
    await waitForHash(page, '#/channels');
    await page.getByTestId('channel-row').first().waitFor();
    const nav = await page.locator('nav').boundingBox();
    expect([nav?.x, nav?.y, nav?.width]).toEqual([0, 0, PHONE_VIEWPORT.width]);
    expect(nav === null ? Infinity : nav.height).toBeLessThan(PHONE_VIEWPORT.height / 8);
    expect(await sidewaysOverflow(page)).toEqual([0, 0]);
    await chromium().screenshot(page, 'phone-channels');

    await page.getByRole('button', { name: 'New channel' }).click();
    const form = page.getByTestId('new-channel');
    await form.locator('select[name="type"]').selectOption('workflow');
    await form.locator('select[name="slot-triage"]').selectOption('expert');
    await form.locator('select[name="slot-billing"]').selectOption('pal');
    await page.getByTestId('graph-preview').waitFor();
    expect(await sidewaysOverflow(page)).toEqual([0, 0]);
    await chromium().screenshot(page, 'phone-new-workflow');

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
    await chromium().screenshot(page, 'phone-channel');

    // Three participants with their online dots wrap within the header.
    const panel = await openChannel({ type: 'discussion', target: ['expert', 'pal'], intent: 'a three-way chat' });
    await goToHash(page, `#/channels/${panel}`);
    await waitForChannelState(page, 'active');
    await page.getByTestId('composer').waitFor();
    expect(await sidewaysOverflow(page)).toEqual([0, 0]);
    const composer = await page.getByTestId('composer').boundingBox();
    expect(composer !== null && composer.y + composer.height <= PHONE_VIEWPORT.height).toBe(true);
    await chromium().screenshot(page, 'phone-discussion');

    await navigate(page, 'Agents');
    await page.getByTestId('agent-row').first().waitFor();
    expect(await sidewaysOverflow(page)).toEqual([0, 0]);
    await chromium().screenshot(page, 'phone-agents');
    expect(chromium().pageErrors).toEqual([]);
  });

  it('fits 1366×768: the composer on screen under a transcript scrolled to its end', async () => {
    const chat = await openChannel({ type: 'conversation', target: 'pal', intent: 'a long chat' });
    for (let i = 1; i <= 12; i++) {
      // A conversation takes turns: each post waits for pal's answer.
      const answered = untilText(chat, `pal heard: Message ${i} of a long chat.`);
      await call(url(), `/v1/channels/${chat}/envelopes`, { token, body: { text: `Message ${i} of a long chat.` } });
      await answered;
    }
    await goToHash(ann, `#/channels/${chat}`);
    await waitForText(envelopes(ann, { sender: 'pal' }), 'pal heard: Message 12 of a long chat.');
    // Lines that arrive while the page is open keep the transcript at its end.
    const box = ann.getByTestId('composer').locator('textarea[name="text"]');
    await box.fill('And one more.');
    await box.press('Enter');
    await waitForText(envelopes(ann, { sender: 'pal' }), 'pal heard: And one more.');
    const transcript = await ann.getByTestId('transcript').boundingBox();
    const composer = await ann.getByTestId('composer').boundingBox();
    const last = await envelopes(ann).last().boundingBox();
    expect(composer !== null && composer.y + composer.height <= 768).toBe(true);
    expect(transcript !== null && last !== null && last.y + last.height <= transcript.y + transcript.height + 1).toBe(
      true,
    );
    expect(await sidewaysOverflow(ann)).toEqual([0, 0]);
    await chromium().screenshot(ann, 'laptop-long-chat');
    expect(chromium().pageErrors).toEqual([]);
  });
});
