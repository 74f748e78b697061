/**
 * What a browser test of the web console runs on: a secured stack, a bridge that serves the console to its people,
 * an SDK connection for the test's agents and headless Chromium. `consoleStackPerFile` starts one for the tests of a
 * file and stops it after them, screenshotting every open page of a test that failed; nothing of it (nats-server,
 * hub, bridge, Chromium) outlives the file.
 *
 * @example
 * ```ts
 * const stack = consoleStackPerFile({ people: { ann: 'k-ann' }, apiKeys: { pal: 'k-pal' } });
 * beforeAll(async () => {
 *   await stack.sdk.register({ name: 'pal', auth: stack.auth('pal') }, { handler: answeringTexts((t) => t) });
 * });
 * it('shows ann her channels', async () => {
 *   const ann = await stack.signIn('ann');
 *   // …
 * });
 * ```
 */
import { HubClient } from '@ag2net/client';
import { createManualClock, type Hub, type HubOptions, type ManualClock } from '@ag2net/hub';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { sessionToken } from './bridge-calls.js';
import { assertConsoleServed, launchBrowser, type TestBrowser } from './browser.js';
import { signInWithForm, waitForHash } from './console-ui.js';
import { startSecuredStack, type SecuredStack } from './secured-stack.js';
import { startStackBridge } from './stack-bridge.js';

/** Options of `startConsoleStack` and `consoleStackPerFile`. */
export interface ConsoleStackOptions {
  /** API keys by name of the people who sign in on the bridge; the hub admits them too. */
  readonly people: Readonly<Record<string, string>>;
  /** API keys by name of the identities that register with the hub directly (the test's agents); default none. */
  readonly apiKeys?: Readonly<Record<string, string>>;
  /** The bridge's operator key (`$operator` signs in with it); default none, no operator. */
  readonly operatorKey?: string;
  /**
   * Runs the hub on a manual clock that starts at this time (ms since the epoch), with no sweep timer: its time
   * moves and its sweepers run only when the test says (`stepClock`, or `clock.set` and `hub.tick()`). Default: the
   * clock of `hub`, else the system's, and the hub's own sweeps.
   */
  readonly manualClockAt?: number;
  /** More options of the hub: a clock, a retention, …; default none. */
  readonly hub?: HubOptions;
}

/** The `auth` of a passport that registers with an API key. */
export interface ApiKeyAuth {
  readonly scheme: 'api_key';
  readonly claim: { readonly token: string };
}

/** A running console stack. */
export interface ConsoleStack {
  readonly secured: SecuredStack;
  /** The stack's hub (active). */
  readonly hub: Hub;
  /** The bridge's base URL, where the console is served. */
  readonly url: string;
  /** A registrant connection to register the test's agents on. */
  readonly sdk: HubClient;
  readonly browser: TestBrowser;
  /** The hub's manual clock; throws unless `manualClockAt` was given. */
  readonly clock: ManualClock;
  /** The passport `auth` of `name`, one of `people` or `apiKeys`. */
  auth(name: string): ApiKeyAuth;
  /** Signs a person of `people` (or `$operator`) in on the bridge; resolves with the session's token. */
  session(name: string): Promise<string>;
  /** The console's sign-in link of a person of `people`: the page it opens signs them in and shows their channels. */
  signInLink(person: string): string;
  /**
   * Opens a context of its own for a person of `people` on their sign-in link, named `context` (default the
   * person's name; 1366×768 unless `viewport` says otherwise); resolves with the page once it shows the channels.
   */
  signIn(
    person: string,
    options?: { readonly context?: string; readonly viewport?: { width: number; height: number } },
  ): Promise<Page>;
  /** Opens a context named `operator` and signs `$operator` in with the sign-in form. */
  signInOperator(): Promise<Page>;
  /** Moves the hub's manual clock on by `ms` and runs its sweepers once; throws unless `manualClockAt` was given. */
  stepClock(ms: number): Promise<void>;
  /** Closes Chromium, the bridge, the SDK connection and the stack, in that order. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The longest the stack and Chromium may take to start, in ms. */
export const CONSOLE_STACK_START_TIMEOUT_MS = 60_000;

/**
 * Starts a secured stack whose hub admits `people` and `apiKeys`, a bridge that signs `people` in, an SDK
 * connection and Chromium (beside the stack). Whatever started is stopped again when a later step fails.
 */
export async function startConsoleStack(options: ConsoleStackOptions): Promise<ConsoleStack> {
  const keys: Readonly<Record<string, string>> = { ...options.apiKeys, ...options.people };
  const manualClock = options.manualClockAt === undefined ? null : createManualClock(options.manualClockAt);
  const hubOptions: HubOptions =
    manualClock === null ? { ...options.hub } : { ...options.hub, clock: manualClock, sweepIntervalMs: 0 };
  // Chromium starts while the stack does; both are stopped below when either fails.
  const [launched, started] = await Promise.allSettled([
    launchBrowser(),
    startSecuredStack({ apiKeys: keys, hub: hubOptions }),
  ]);
  const closers: (() => Promise<void>)[] = [];
  if (started.status === 'fulfilled') closers.push(() => started.value.stop());
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (launched.status === 'fulfilled') await launched.value.close();
      const errors: unknown[] = [];
      for (const close of closers.splice(0).reverse()) await close().catch((err: unknown) => errors.push(err));
      if (errors.length > 0) throw new AggregateError(errors, 'the console stack did not stop cleanly');
    })();
    return stopping;
  };
  try {
    if (launched.status === 'rejected') throw launched.reason;
    if (started.status === 'rejected') throw started.reason;
    const secured = started.value;
    const browser = launched.value;
    const sdk = await HubClient.connect({
      servers: secured.url,
      prefix: secured.prefix,
      creds: secured.registrantCreds,
    });
    closers.push(() => sdk.close());
    const bridge = await startStackBridge(secured, {
      apiKeys: options.people,
      ...(options.operatorKey === undefined ? {} : { operatorKey: options.operatorKey }),
    });
    closers.push(() => bridge.close());
    await assertConsoleServed(bridge.url);
    /** The key of `name` among `of` (`$operator`'s is the operator key). */
    const keyOf = (name: string, of: Readonly<Record<string, string>>): string => {
      const key = name === '$operator' ? options.operatorKey : of[name];
      if (key === undefined) throw new Error(`the console stack has no API key for ${name}`);
      return key;
    };
    const clock = (): ManualClock => {
      if (manualClock === null) throw new Error('the console stack runs no manual clock: give manualClockAt');
      return manualClock;
    };
    const signInLink = (person: string): string =>
      `${bridge.url}/#/signin?name=${person}&key=${keyOf(person, options.people)}`;
    return {
      secured,
      hub: secured.hub,
      url: bridge.url,
      sdk,
      browser,
      get clock() {
        return clock();
      },
      auth: (name) => ({ scheme: 'api_key', claim: { token: keyOf(name, keys) } }),
      session: (name) => sessionToken(bridge.url, name, keyOf(name, options.people)),
      signInLink,
      async signIn(person, signInOptions = {}) {
        const page = await browser.person(signInOptions.context ?? person, signInLink(person), {
          viewport: signInOptions.viewport,
        });
        await waitForHash(page, '#/channels');
        return page;
      },
      async signInOperator() {
        const page = await browser.person('operator', `${bridge.url}/#/signin`);
        await signInWithForm(page, '$operator', keyOf('$operator', options.people));
        return page;
      },
      async stepClock(ms) {
        clock().advance(ms);
        await secured.hub.tick();
      },
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/**
 * Starts a console stack before the tests of the calling file and stops it after them (vitest hooks); after a test
 * that failed, screenshots every open page as `failed-<test name>-<person>.png`. Call at the top level of a test
 * file; read the stack's members inside tests and hooks (before the file's tests they throw).
 */
export function consoleStackPerFile(options: ConsoleStackOptions): ConsoleStack {
  let running: ConsoleStack | null = null;
  const started = (): ConsoleStack => {
    if (running === null) {
      throw new Error('the console stack is not running: call consoleStackPerFile() at the top level of a file');
    }
    return running;
  };
  beforeAll(async () => {
    running = await startConsoleStack(options);
  }, CONSOLE_STACK_START_TIMEOUT_MS);
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') {
      await running?.browser.screenshotAll(`failed-${context.task.name.slice(0, 40)}`);
    }
  });
  afterAll(async () => {
    const stopping = running?.stop();
    running = null;
    await stopping;
  });
  return {
    get secured() {
      return started().secured;
    },
    get hub() {
      return started().hub;
    },
    get url() {
      return started().url;
    },
    get sdk() {
      return started().sdk;
    },
    get browser() {
      return started().browser;
    },
    get clock() {
      return started().clock;
    },
    auth: (name) => started().auth(name),
    session: (name) => started().session(name),
    signInLink: (person) => started().signInLink(person),
    signIn: (person, signInOptions) => started().signIn(person, signInOptions),
    signInOperator: () => started().signInOperator(),
    stepClock: (ms) => started().stepClock(ms),
    stop: () => started().stop(),
    [Symbol.asyncDispose]: () => started().stop(),
  };
}
