/**
 * Steps of the web console's browser tests, written against the console's stable hooks only: its `data-testid`s
 * and `data-*` attributes, nav link texts and form field names. Every wait is Playwright's own (auto-waiting
 * locators, `waitForURL`) with an explicit timeout; none sleeps. Nothing is evaluated in the page from a string
 * predicate: the console's Content-Security-Policy forbids `eval`, as it should.
 */
import type { Locator, Page, Route } from 'playwright-core';
import { UI_TIMEOUT_MS } from './browser.js';

/** Signs in on the sign-in form and waits until the shell shows who is signed in. */
export async function signInWithForm(page: Page, name: string, key: string): Promise<void> {
  const form = page.getByTestId('signin');
  await form.locator('input[name="name"]').fill(name);
  await form.locator('input[name="api_key"]').fill(key);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('whoami').waitFor({ timeout: UI_TIMEOUT_MS });
}

/** Follows one of the shell's nav links (`Agents`, `Channels`, `Tasks`, `Audit`, `Hub`). */
export async function navigate(page: Page, link: 'Agents' | 'Channels' | 'Tasks' | 'Audit' | 'Hub'): Promise<void> {
  await page.locator('nav').getByRole('link', { name: link, exact: true }).click();
}

/** The value of `attribute` on every element `locator` matches now, in document order. */
export async function attributesOf(locator: Locator, attribute: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(attribute)));
}

/** The page's hash (`#/channels`, …), as its URL says now. */
export function hashOf(page: Page): string {
  return new URL(page.url()).hash;
}

/** Waits until the page's hash is `hash` exactly (or matches it, for a RegExp); resolves with the hash. */
export async function waitForHash(page: Page, hash: string | RegExp): Promise<string> {
  await page.waitForURL((url) => (typeof hash === 'string' ? url.hash === hash : hash.test(url.hash)), {
    timeout: UI_TIMEOUT_MS,
  });
  return hashOf(page);
}

/** Waits until the page shows a channel (`#/channels/<id>`); resolves with the channel's id. */
export async function waitForChannelPage(page: Page): Promise<string> {
  return (await waitForHash(page, /^#\/channels\/[^/]+$/)).slice('#/channels/'.length);
}

/**
 * Opens a channel with the channel list's New channel form: its `type`, the agents ticked as its `targets` and its
 * `intent`; resolves with the channel's id once its page shows.
 */
export async function openChannelWithForm(
  page: Page,
  channel: { readonly type: string; readonly targets: readonly string[]; readonly intent: string },
): Promise<string> {
  await page.getByRole('button', { name: 'New channel' }).click();
  const form = page.getByTestId('new-channel');
  await form.locator('select[name="type"]').selectOption(channel.type);
  for (const target of channel.targets) {
    await form.locator(`input[type="checkbox"][name="target"][value="${target}"]`).check();
  }
  await form.locator('input[name="intent"]').fill(channel.intent);
  await form.getByRole('button', { name: 'Open' }).click();
  return waitForChannelPage(page);
}

/** Writes `text` in the channel page's composer and sends it (Enter). */
export async function say(page: Page, text: string): Promise<void> {
  const box = page.getByTestId('composer').locator('textarea[name="text"]');
  await box.fill(text);
  await box.press('Enter');
}

/** Goes to a view by changing the hash only, as a link in the console does (the page and its session stay). */
export async function goToHash(page: Page, hash: string): Promise<void> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
  await waitForHash(page, hash);
}

/** Selects the transcript's envelopes with these attributes (`data-kind`, `data-sender`, `data-event-type`, …). */
export function envelopes(page: Page, attributes: Readonly<Record<string, string>> = {}): Locator {
  const filters = Object.entries(attributes)
    .map(([name, value]) => `[data-${name}="${value}"]`)
    .join('');
  return page.getByTestId('transcript').locator(`[data-testid="envelope"]${filters}`);
}

/** Waits for the first element `locator` matches to hold `text`, and resolves with its whole text. */
export async function waitForText(locator: Locator, text: string): Promise<string> {
  const match = locator.filter({ hasText: text }).first();
  await match.waitFor({ timeout: UI_TIMEOUT_MS });
  return (await match.textContent()) ?? '';
}

/** Waits until the channel page's header shows `state` (`data-state`). */
export async function waitForChannelState(page: Page, state: string): Promise<void> {
  await page.locator(`[data-testid="channel-header"][data-state="${state}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
}

/** Requests a test holds unanswered (`holdRequests`): how many arrived, and the release of all of them. */
export interface HeldRequests {
  /** Requests held so far. */
  readonly count: () => number;
  /** Stops holding: lets every held request (and every later one) through to the bridge. */
  release(): Promise<void>;
}

/**
 * Holds every request of the page whose URL `matches` unanswered until `release()`: what the page shows meanwhile
 * comes from elsewhere (its event streams).
 */
export async function holdRequests(page: Page, matches: (url: URL) => boolean): Promise<HeldRequests> {
  const held: Route[] = [];
  let holding = true;
  const handler = async (route: Route): Promise<void> => {
    if (holding) held.push(route);
    else await route.continue();
  };
  const matcher = (url: URL): boolean => matches(url);
  await page.route(matcher, handler);
  return {
    count: () => held.length,
    async release() {
      holding = false;
      await page.unroute(matcher, handler);
      for (const route of held.splice(0)) await route.continue().catch(() => undefined);
    },
  };
}

/** The names of the nav links the shell shows, in order (the brand, a link home, left out). */
export async function navLinks(page: Page): Promise<string[]> {
  const links = await page.locator('nav').getByTestId('nav-link').all();
  return (await Promise.all(links.map((l) => l.textContent()))).map((t) => (t ?? '').trim());
}

/** The text of the first element `locator` matches, trimmed; waits for it. */
export async function textOf(locator: Locator): Promise<string> {
  await locator.first().waitFor({ timeout: UI_TIMEOUT_MS });
  return ((await locator.first().textContent()) ?? '').trim();
}
