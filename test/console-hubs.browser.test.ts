/**
 * The hub view of the web console on a deployment of 4 partitions served by two hubs (headless Chromium, a secured
 * stack): the in-process hub `hub-a` and the hub-service process `hub-b`, which takes its fair share of the
 * partitions from `hub-a`. The operator sees both hubs with the partitions each holds and every partition's holder
 * and epoch; once `hub-b` freezes (SIGSTOP), its partitions have no live holder until its leases run out, and the
 * view says so at the top and on their tiles; once it runs again, every partition has a holder again.
 */
import { waitFor } from '@ag2net/test-support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';
import { UI_TIMEOUT_MS } from './support/browser.js';
import { consoleStackPerFile } from './support/console-stack.js';
import { attributesOf, navigate, textOf } from './support/console-ui.js';
import { startHubService, type ServiceProcess } from './support/processes.js';

const PARTITIONS = 4;
/**
 * The hubs' lease time, ms. A frozen hub's partitions stay without a live holder until its leases run out (between
 * two thirds of this and all of it after it froze): long enough for the view to show them. A new hub gets its share
 * two lease times after it started.
 */
const LEASE_TTL_MS = 10_000;

const StatusReply = z.object({
  partitions: z.number().nullable(),
  hubs: z.array(z.object({ hub_id: z.string(), role: z.string() })),
  holders: z.array(
    z.object({ partition: z.number(), held_by: z.array(z.object({ hub_id: z.string(), epoch: z.number() })) }),
  ),
  unheld: z.array(z.number()),
});
type Status = z.output<typeof StatusReply>;

const stack = consoleStackPerFile({
  people: {},
  operatorKey: 'k-operator-console-hubs',
  hub: { hubId: 'hub-a', partitions: PARTITIONS, leaseTtlMs: LEASE_TTL_MS },
});
let hubB: ServiceProcess;
let token = '';
let operator: Page;
/** The partitions each hub holds once they share them, and the epoch of each partition's lease. */
const shares = { a: [] as number[], b: [] as number[], epochs: new Map<number, number>() };

async function status(): Promise<Status> {
  const reply = await call(stack.url, '/v1/hub/status', { token });
  expect(reply.status).toBe(200);
  return StatusReply.parse(reply.body);
}

/** The partitions `hubId` holds in `s`. */
const heldBy = (s: Status, hubId: string): number[] =>
  s.holders.filter((p) => p.held_by.some((h) => h.hub_id === hubId)).map((p) => p.partition);

/** Two partitions as the console writes them: `1-2` when adjacent, else `0, 3`. */
const pair = ([x, y]: readonly number[]): string => (y === (x ?? 0) + 1 ? `${x}-${y}` : `${x}, ${y}`);

beforeAll(async () => {
  hubB = startHubService({
    natsUrl: stack.secured.url,
    prefix: stack.secured.prefix,
    hubId: 'hub-b',
    leaseTtlMs: LEASE_TTL_MS,
    extraArgs: ['--auth-dir', stack.secured.authDir, '--partitions', String(PARTITIONS)],
  });
  token = await stack.session('$operator');
  // Each hub serves its fair share, 2 of the 4, once the handover is done.
  const shared = await waitFor(
    async () => {
      const s = await status();
      const [a, b] = [heldBy(s, 'hub-a'), heldBy(s, 'hub-b')];
      return a.length === 2 && b.length === 2 && s.unheld.length === 0 ? s : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500, what: 'hub-b holding its share of the partitions' },
  );
  shares.a = heldBy(shared, 'hub-a');
  shares.b = heldBy(shared, 'hub-b');
  for (const p of shared.holders) shares.epochs.set(p.partition, p.held_by[0]?.epoch ?? -1);
  operator = await stack.signInOperator();
}, 120_000);

afterAll(async () => {
  await hubB?.stop();
});

describe('the hub view with two hubs sharing 4 partitions', { timeout: 120_000 }, () => {
  it('shows both hubs with the partitions each holds, and every partition with its holder and epoch', async () => {
    await navigate(operator, 'Hub');
    const rows = operator.getByTestId('hub-row');
    // The partition tiles come with the roster, and the hub rows with them (before, the answering hub only).
    await operator.getByTestId('partitions').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await attributesOf(rows, 'data-hub-id')).toEqual(['hub-a', 'hub-b']);
    expect(await attributesOf(rows, 'data-role')).toEqual(['active', 'active']);
    expect(await attributesOf(rows, 'data-partitions')).toEqual([pair(shares.a), pair(shares.b)]);
    expect(await operator.getByTestId('hubs').locator('th').allTextContents()).toEqual([
      'Hub id',
      'Role',
      'Partitions',
      'Up for',
      'Open channels',
      'Quarantined',
      'Dead letters',
    ]);
    expect(await textOf(operator.getByTestId('partition-summary'))).toBe('All 4 partitions held by 2 hubs.');
    expect(await textOf(operator.getByTestId('answering-held'))).toMatch(
      new RegExp(`^(${pair(shares.a)}|${pair(shares.b)}) of 4$`),
    );

    const tiles = operator.getByTestId('partition');
    expect(await attributesOf(tiles, 'data-partition')).toEqual(['0', '1', '2', '3']);
    const texts = await Promise.all((await tiles.all()).map(async (t) => (await t.textContent())?.trim()));
    expect(texts).toEqual(
      [0, 1, 2, 3].map((p) => {
        const hub = shares.a.includes(p) ? 'hub-a' : 'hub-b';
        return `Partition ${p} ${hub} epoch ${shares.epochs.get(p)}`;
      }),
    );
    expect(await operator.getByTestId('unheld-warning').count()).toBe(0);
    await stack.browser.screenshot(operator, 'hubs-partitions');
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it('warns while a frozen hub leaves its partitions without a live holder, and clears once they have one', async () => {
    hubB.pause();
    try {
      // The frozen hub no longer answers the roster: its partitions have no live holder until its leases run out.
      await waitFor(async () => (await status()).unheld.length === 2, {
        timeoutMs: 5_000,
        intervalMs: 200,
        what: "hub-b's partitions without a holder",
      });
      await operator.reload();
      expect(await textOf(operator.getByTestId('unheld-warning-text'))).toBe(
        `No hub holds partitions ${pair(shares.b)}: their channels are not served until a hub takes them over.`,
      );
      expect(await attributesOf(operator.getByTestId('hub-row'), 'data-hub-id')).toEqual(['hub-a']);
      const unheld = operator.locator('[data-testid="partition"].partition-unheld');
      expect(await attributesOf(unheld, 'data-partition')).toEqual(shares.b.map(String));
      expect(await attributesOf(unheld, 'data-holder')).toEqual(['', '']);
      expect(await textOf(unheld)).toBe(`Partition ${shares.b[0]} no holder`);
      expect(await textOf(operator.getByTestId('partition-summary'))).toBe('2 of 4 partitions held by 1 hub.');
      await stack.browser.screenshot(operator, 'hubs-unheld');
    } finally {
      hubB.resume();
    }
    // hub-a takes the partitions over when their leases run out; the warning goes at the next read after that.
    await operator.getByTestId('unheld-warning').waitFor({ state: 'detached', timeout: 3 * LEASE_TTL_MS });
    await operator.locator('[data-testid="partition"].partition-unheld').first().waitFor({ state: 'detached' });
    expect(await textOf(operator.getByTestId('partition-summary'))).toMatch(/^All 4 partitions held by [12] hubs?\.$/);
    expect(stack.browser.pageErrors).toEqual([]);
  });
});
