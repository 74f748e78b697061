/**
 * A channel whose history the hub's retention removed, through the bridge and in the web console (headless Chromium,
 * a secured stack whose hub clock the test steps): the bridge answers its metadata with `expired_at` and a read of its
 * log, state or stream with 404 and the hub's details; the person's deliveries stream goes on past it; the channel
 * list marks it, and its page says when its history expired and how long it was kept, instead of a transcript, with
 * no composer — also for a page that was following the channel when its retention ran out.
 */
import { EnvelopeSchema } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, openSse } from './support/bridge-http.js';
import { openChannel, untilChannelText } from './support/bridge-calls.js';
import { answeringTexts } from './support/console-agents.js';
import { consoleStackPerFile } from './support/console-stack.js';
import { goToHash, textOf, waitForChannelState } from './support/console-ui.js';

const KEYS = { ann: 'k-ann-retention', pal: 'k-pal-retention' } as const;
const HOUR = 3_600_000;

const ChannelReply = z.object({
  channel: z.object({ channel_id: z.string(), closed_at: z.string().nullable(), expired_at: z.string().optional() }),
});
const ChannelsPage = z.object({
  channels: z.array(z.object({ channel_id: z.string(), expired_at: z.string().optional() })),
  previews: z.record(z.string(), z.unknown()),
});

const stack = consoleStackPerFile({
  people: { ann: KEYS.ann },
  apiKeys: { pal: KEYS.pal },
  operatorKey: 'k-operator-console-retention',
  // The hub's clock starts two and a half hours before the browser's, so that the two hours it is stepped on stay past.
  manualClockAt: Date.now() - 2.5 * HOUR,
  hub: { retainClosedMs: HOUR },
});
let token = '';
let operatorToken = '';
let ann: Page;
/** The channel whose history expires first (its page opened afterwards), and the one ann follows as it expires. */
const made = { old: '', oldExpiredAt: '', followed: '' };

/** A conversation of ann's with pal: one text and pal's answer, then closed by ann; resolves with its id. */
async function closedChat(intent: string): Promise<string> {
  const { channelId: id } = await openChannel(stack.url, token, { type: 'conversation', target: 'pal', intent });
  await call(stack.url, `/v1/channels/${id}/envelopes`, { token, body: { text: `about ${intent}` } });
  await untilChannelText(stack.url, token, { channelId: id, text: `pal heard: about ${intent}` });
  expect((await call(stack.url, `/v1/channels/${id}/close`, { token, body: {} })).status).toBe(200);
  return id;
}

/** The channel's metadata as ann reads it through the bridge. */
async function metadata(channelId: string) {
  return ChannelReply.parse((await call(stack.url, `/v1/channels/${channelId}`, { token })).body).channel;
}

/** What the bridge answers a read of the history of a channel that expired at `expiredAt`. */
function expiredBody(channelId: string, expiredAt: string) {
  return {
    error: {
      code: 'not_found',
      message: `the history of channel ${channelId} expired at ${expiredAt}`,
      details: { reason: 'expired', channel_id: channelId, expired_at: expiredAt },
    },
  };
}

beforeAll(async () => {
  await stack.sdk.register(
    { name: 'pal', auth: stack.auth('pal') },
    { handler: answeringTexts((t) => `pal heard: ${t}`) },
  );
  token = await stack.session('ann');
  operatorToken = await stack.session('$operator');
}, 60_000);

describe('a channel whose history expired', { timeout: 120_000 }, () => {
  it('the bridge answers its metadata with expired_at, and a read of its history with 404 and the hub’s details', async () => {
    made.old = await closedChat('an old question');
    const closedAt = (await metadata(made.old)).closed_at;
    if (closedAt === null) throw new Error('the channel did not end');
    made.oldExpiredAt = new Date(Date.parse(closedAt) + HOUR).toISOString();
    // A channel that stays open, listed beside it.
    made.followed = (
      await openChannel(stack.url, token, { type: 'conversation', target: 'pal', intent: 'a live chat', ttl: '1d' })
    ).channelId;
    await call(stack.url, `/v1/channels/${made.followed}/envelopes`, { token, body: { text: 'still here' } });

    expect(await metadata(made.old)).not.toHaveProperty('expired_at');
    stack.clock.set(Date.parse(closedAt) + HOUR);
    // The hub removes the history once delivery has fanned out the close (a later sweep when it had not yet).
    await waitFor(
      async () => {
        await stack.hub.tick();
        const audit = await call(stack.url, `/v1/audit?kinds=channel_history_removed&channel_id=${made.old}`, {
          token: operatorToken,
        });
        return z.object({ records: z.array(z.unknown()) }).parse(audit.body).records.length === 1;
      },
      { what: 'the history removed', timeoutMs: 10_000 },
    );

    expect((await metadata(made.old)).expired_at).toBe(made.oldExpiredAt);
    expect(await metadata(made.followed)).not.toHaveProperty('expired_at');
    for (const path of [`/v1/channels/${made.old}/log`, `/v1/channels/${made.old}/state`]) {
      const reply = await call(stack.url, path, { token });
      expect([path, reply.status, reply.body]).toEqual([path, 404, expiredBody(made.old, made.oldExpiredAt)]);
    }
    const stream = await openSse(`${stack.url}/v1/channels/${made.old}/stream`, { authorization: `Bearer ${token}` });
    expect([stream.status, stream.error]).toEqual([404, expiredBody(made.old, made.oldExpiredAt)]);

    const page = ChannelsPage.parse((await call(stack.url, '/v1/channels?preview=true', { token })).body);
    expect(page.channels.map((c) => [c.channel_id, c.expired_at])).toEqual([
      [made.old, made.oldExpiredAt],
      [made.followed, undefined],
    ]);
    expect(Object.keys(page.previews)).toEqual([made.followed]);

    // The person's deliveries from the start go past the expired channel to the live one.
    const deliveries = await openSse(`${stack.url}/v1/me/stream?from=start`, { authorization: `Bearer ${token}` });
    try {
      expect(deliveries.status).toBe(200);
      const first = await deliveries.next();
      expect(first.event).toBe('envelope');
      expect(EnvelopeSchema.parse(first.data).channel_id).toBe(made.followed);
    } finally {
      deliveries.close();
    }
  });

  it('the list marks it, and its page says when it expired and how long it was kept, with no transcript', async () => {
    ann = await stack.signIn('ann');
    const row = ann.locator(`[data-testid="channel-row"][data-channel-id="${made.old}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-history')).toBe('expired');
    expect(await textOf(row.locator('[data-label="State"]'))).toBe('closed history expired');
    expect(await textOf(row.getByTestId('channel-preview'))).toMatch(/^History expired /);
    const live = ann.locator(`[data-testid="channel-row"][data-channel-id="${made.followed}"]`);
    expect(await live.getAttribute('data-history')).toBe('kept');
    await stack.browser.screenshot(ann, 'retention-list');

    await row.getByRole('link').first().click();
    await waitForChannelState(ann, 'closed');
    const notice = ann.getByTestId('history-expired');
    const text = await textOf(notice.locator('p').first());
    expect(text).toMatch(/^The history of this channel expired on .+; it was kept 1 h after it ended\.$/);
    expect(await notice.locator('time').getAttribute('datetime')).toBe(made.oldExpiredAt);
    expect(await ann.getByTestId('transcript').count()).toBe(0);
    expect(await ann.getByTestId('composer').count()).toBe(0);
    expect(await ann.getByTestId('error').count()).toBe(0);
    expect(await textOf(ann.getByTestId('close-reason'))).toBe('(human_closed)');
    await stack.browser.screenshot(ann, 'retention-channel');
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it('a page that follows a channel when its history expires shows the notice in place of the transcript', async () => {
    await goToHash(ann, `#/channels/${made.followed}`);
    await waitForChannelState(ann, 'active');
    await ann.getByTestId('transcript').getByText('pal heard: still here').waitFor();
    expect((await call(stack.url, `/v1/channels/${made.followed}/close`, { token, body: {} })).status).toBe(200);
    await waitForChannelState(ann, 'closed');
    const closedAt = (await metadata(made.followed)).closed_at;
    if (closedAt === null) throw new Error('the channel did not end');

    await stack.stepClock(HOUR);
    const notice = ann.getByTestId('history-expired');
    await notice.waitFor();
    expect(await notice.locator('time').getAttribute('datetime')).toBe(
      new Date(Date.parse(closedAt) + HOUR).toISOString(),
    );
    expect(await textOf(notice.locator('p').first())).toMatch(/; it was kept 1 h after it ended\.$/);
    expect(await ann.getByTestId('transcript').count()).toBe(0);
    expect(await ann.getByTestId('error').count()).toBe(0);
    await stack.browser.screenshot(ann, 'retention-followed');
    expect(stack.browser.pageErrors).toEqual([]);
  });
});
