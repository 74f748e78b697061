/**
 * Headless Chromium for the web console's browser tests: Debian's `chromium` package driven by playwright-core
 * (which never downloads a browser here). One browser process per test file; one context per person, so that people
 * share no cookies and no `sessionStorage`; screenshots land in `test-artifacts/console/<name>.png` for a person to
 * look at after the run.
 *
 * @example
 * ```ts
 * await using browser = await launchBrowser();
 * const page = await browser.person('ann', bridge.url);
 * await browser.screenshot(page, 'channels');
 * ```
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian's `chromium` package installs the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The screen the console is made for: a laptop's. */
export const VIEWPORT = { width: 1366, height: 768 } as const;

/** The smallest screen the console is made for: a phone's (390 CSS pixels wide). */
export const PHONE_VIEWPORT = { width: 390, height: 844 } as const;

/** Where screenshots are saved (gitignored; CI keeps them as artifacts). */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

/** The longest a browser test waits for one thing to appear, in ms. */
export const UI_TIMEOUT_MS = 30_000;

/** A running Chromium and the people's contexts opened in it. */
export interface TestBrowser {
  readonly browser: Browser;
  /**
   * Opens a context of its own for `name` (1366×768 unless `viewport` says otherwise) and a page on `url`. Uncaught
   * page errors are collected in `pageErrors`, named by person.
   */
  person(name: string, url: string, options?: { viewport?: { width: number; height: number } }): Promise<Page>;
  /** Saves a full-window screenshot as `test-artifacts/console/<name>.png`; resolves with its path. */
  screenshot(page: Page, name: string): Promise<string>;
  /** Uncaught errors thrown in the pages, as `<person>: <message>`. */
  readonly pageErrors: readonly string[];
  /**
   * Screenshots every open page as `<prefix>-<person>.png`, the prefix made file-name safe (after a failure, to see
   * what the page showed).
   */
  screenshotAll(prefix: string): Promise<void>;
  /**
   * Closes every person's context opened so far, with their pages, and forgets their `pageErrors`: the browser stays
   * for the people of the next tests, who start with no page error. Never throws.
   */
  closeContexts(): Promise<void>;
  /** Closes every context and the browser. Idempotent; never throws. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Launches Chromium headless. A missing browser is a failure that says how to install it, never a skip: these tests
 * are part of what CI proves.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the web console's browser tests need Debian's package ` +
        '(sudo apt-get install -y chromium), which bash .ci/run installs',
    );
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox'],
  });
  const contexts: { name: string; context: BrowserContext }[] = [];
  const pageErrors: string[] = [];
  let closed = false;
  const screenshot = async (page: Page, name: string): Promise<string> => {
    await mkdir(ARTIFACTS_DIR, { recursive: true });
    const path = join(ARTIFACTS_DIR, `${name}.png`);
    await page.screenshot({ path });
    return path;
  };
  const closeContexts = async (): Promise<void> => {
    for (const { context } of contexts.splice(0)) await context.close().catch(() => undefined);
    pageErrors.splice(0);
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await closeContexts();
    await browser.close().catch(() => undefined);
  };
  return {
    browser,
    pageErrors,
    async person(name, url, options = {}) {
      const context = await browser.newContext({ viewport: options.viewport ?? VIEWPORT });
      context.setDefaultTimeout(UI_TIMEOUT_MS);
      contexts.push({ name, context });
      const page = await context.newPage();
      page.on('pageerror', (err) => pageErrors.push(`${name}: ${err.message}`));
      await page.goto(url);
      return page;
    },
    screenshot,
    async screenshotAll(prefix) {
      const safe = prefix.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
      for (const { name, context } of contexts) {
        for (const [i, page] of context.pages().entries()) {
          await screenshot(page, `${safe}-${name}${i === 0 ? '' : `-${i}`}`).catch(() => undefined);
        }
      }
    },
    closeContexts,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Resolves once `url` serves the console's page, or fails saying how to build it. */
export async function assertConsoleServed(url: string): Promise<void> {
  const res = await fetch(url);
  const body = await res.text();
  if (res.status !== 200 || !body.toLowerCase().includes('<html')) {
    throw new Error(
      `the bridge at ${url} does not serve the web console (status ${res.status}): build it with npm run build:console`,
    );
  }
}
