import { IdentityCredentialsError, type HumanClient } from '@ag2net/client';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_TEXT,
  ErrorCode,
  NetworkError,
  type Envelope,
  type PassportInput,
} from '@ag2net/protocol';
import type { Command } from 'commander';
import { mkdir } from 'node:fs/promises';
import { z } from 'zod';
import { IntFlag, actionOn, type CommandEnv } from '../env.js';
import { CliError, ExitCode, usageError } from '../exit.js';
import type { CliIo } from '../io.js';
import { readApiKeysFile } from '../keys-file.js';
import { NameBook, printEnvelope } from '../render.js';
import { resolveAgent } from '../resolve.js';
import { identityCredsDir, type Target } from '../session.js';
import { API_KEYS_FILE, identityCredsFile, isFile } from '../stack.js';

const ChatOptions = z.object({
  type: z.enum(['consulting', 'conversation']).default('conversation'),
  apiKey: z.string().min(1).optional(),
  wait: IntFlag.default(60_000),
});

/**
 * `ag2net chat <agent>`: talk to an agent as a person. The person (`--as`, default the login name) is attached or
 * registered as a `human` identity, opens a channel with the agent, posts each line read from standard input, and
 * prints what the others post. At end of input it waits for the answer to the last line (`--wait`), then closes the
 * channel; Ctrl-C closes it at once.
 *
 * On a secured stack it needs nothing more than `npm start` left in `.data/`: the registrant's credentials to connect,
 * the person's admission key from `api-keys.json` (`ag2net people add` writes one for a new name), and the person's
 * own credentials in `creds/<server>/<prefix>/<name>.creds`, written at the first chat and reused after.
 */
export function chatCommand(program: Command, io: CliIo): void {
  program
    .command('chat')
    .description('open a channel with an agent as a person and talk from the terminal (a line is a message)')
    .argument('<agent>', 'the agent to talk to (name, id or the start of an id)')
    .option('--type <type>', 'conversation (free turns, default) or consulting (one question, one answer)')
    .option(
      '--api-key <key>',
      "the person's admission key (env AG2NET_API_KEY; default: the person's in the stack's api-keys.json)",
    )
    .option('--wait <ms>', 'at end of input, how long to wait for the last answer (default 60000)')
    .action(
      actionOn(io, ChatOptions, async (env, agent, opts) => {
        const session = await env.session('register');
        const { target } = session;
        const me = target.as ?? io.env['USER'] ?? 'cli-user';
        const apiKey = opts.apiKey ?? emptyToUndefined(io.env['AG2NET_API_KEY']) ?? (await stackApiKey(target, me));
        const passport: PassportInput = {
          name: me,
          kind: 'human',
          ...(apiKey === undefined ? {} : { auth: { scheme: 'api_key', claim: { token: apiKey } } }),
        };
        const credsPath = session.secured ? await personCredsPath(target, me) : undefined;
        const human = await session.hub
          .attachHuman(me, { passport, ...(credsPath === undefined ? {} : { credsPath }) })
          .catch(async (err: unknown) => {
            const held = credsPath !== undefined && (await isFile(credsPath));
            throw admissionRefusal(err, { target, me, credsPath, held, keyFound: apiKey !== undefined });
          });
        try {
          // Looked up as the person: on a secured hub the registrant's connection may not read the directory.
          const peer = await resolveAgent(human.hub, agent);
          const names = new NameBook(human.hub);
          names.remember(peer);
          names.remember(human.passport);
          await converse(env, human, {
            agent: peer.name,
            targetId: peer.agent_id ?? agent,
            names,
            ...opts,
          });
        } finally {
          await human.disconnect({ graceMs: 0 });
        }
      }),
    );
}

/**
 * Where a person's credentials are kept on a secured deployment: `--creds-dir` (`AG2NET_CREDS_DIR`), else where
 * `npm start` keeps identities' credentials. The hub issues them at the first chat, the client writes them (0600) and
 * renews them, and the next chat attaches with them.
 */
async function personCredsPath(target: Target, me: string): Promise<string> {
  const dir = await identityCredsDir(target);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return identityCredsFile(dir, me);
}

/** The person's key in the stack's `api-keys.json`, when that file is there and readable and has one. */
async function stackApiKey(target: Target, me: string): Promise<string | undefined> {
  const keys = await readApiKeysFile(target.stack.auth(API_KEYS_FILE)).catch(() => null);
  return keys?.[me];
}

/** A refusal to attach or register the person, with the flags that fix it (never the SDK's option names). */
function admissionRefusal(
  err: unknown,
  ctx: {
    readonly target: Target;
    readonly me: string;
    readonly credsPath: string | undefined;
    /** Whether a file is at `credsPath`. */
    readonly held: boolean;
    readonly keyFound: boolean;
  },
): unknown {
  const { target, me } = ctx;
  if (err instanceof IdentityCredentialsError && ctx.held && ctx.credsPath !== undefined) {
    // A file is there, and it is not the person's: another identity's, or no identity's at all.
    return new CliError(err.message, ExitCode.AccessDenied, {
      hint: `move ${target.stack.shown(ctx.credsPath)} away, or pass --creds-dir <the directory of ${me}'s own .creds>`,
      cause: err,
    });
  }
  if (err instanceof IdentityCredentialsError) {
    const where = ctx.credsPath === undefined ? 'here' : `at ${target.stack.shown(ctx.credsPath)}`;
    return new CliError(
      `${me} is registered, and chatting as ${me} needs its credentials, which are not ${where}`,
      ExitCode.AccessDenied,
      {
        hint: `pass --creds-dir <the directory of ${me}.creds>, or --as <another name>`,
        cause: err,
      },
    );
  }
  if (err instanceof NetworkError && err.code === ErrorCode.AuthFailed) {
    return new CliError(`${err.code}: ${err.message}`, ExitCode.AccessDenied, {
      hint: ctx.keyFound
        ? `the hub refused the admission key of ${me}: pass the right one with --api-key`
        : `${me} has no admission key: \`ag2net people add ${me}\` gives it one (then chat again), or pass --api-key`,
      cause: err,
    });
  }
  return err;
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

interface Conversation {
  readonly agent: string;
  readonly targetId: string;
  readonly names: NameBook;
  readonly type: 'consulting' | 'conversation';
  readonly wait: number;
}

async function converse(env: CommandEnv, human: HumanClient, args: Conversation): Promise<void> {
  if (args.targetId === human.agentId) throw usageError('a person cannot chat with themselves');
  const channel = await human.open({ type: args.type, target: args.targetId });
  const { names } = args;
  const o = env.out;
  o.progress(
    `${args.type} with ${args.agent} in channel ${channel.channelId} as ${human.passport.name}: ` +
      'type a line and Enter to send, Ctrl-D to finish',
  );
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  env.io.signal.addEventListener('abort', onAbort, { once: true });
  let awaiting = false;
  let answered: () => void = () => undefined;
  const subscription = human.subscribe({ channelId: channel.channelId });
  const printing = (async () => {
    for await (const e of subscription) {
      if (e.sender_id === human.agentId) continue;
      if (o.json) o.data(e, { stream: true });
      else await printEnvelope(o, names, e);
      if (e.event_type === EV_TEXT) {
        awaiting = false;
        answered();
      }
      if (isEnd(e)) {
        stop.abort();
        answered();
        return;
      }
    }
  })();
  try {
    for await (const line of abortable(env.io.lines(), stop.signal)) {
      if (line.trim() === '') continue;
      awaiting = true;
      await channel.send(line);
    }
    if (awaiting && !stop.signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, args.wait);
        answered = done;
        stop.signal.addEventListener('abort', done, { once: true });
      });
      if (awaiting) o.progress(`no answer from ${args.agent} within ${args.wait} ms`);
    }
  } finally {
    env.io.signal.removeEventListener('abort', onAbort);
    subscription.close();
    await printing.catch(() => undefined);
    // Closing an ended channel answers its metadata as it is: nothing to check first.
    await channel.close().catch(() => undefined);
  }
}

function isEnd(e: Envelope): boolean {
  return e.event_type === EV_CHANNEL_CLOSED || e.event_type === EV_CHANNEL_EXPIRED;
}

/** The items of `source` until it ends or `signal` aborts. */
async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  const aborted = new Promise<null>((resolve) => {
    if (signal.aborted) resolve(null);
    signal.addEventListener('abort', () => resolve(null), { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([it.next(), aborted]);
      if (next === null || next.done === true) return;
      yield next.value;
    }
  } finally {
    void it.return?.();
  }
}
