import type { HumanClient } from '@ag2net/client';
import { EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED, EV_TEXT, type Envelope, type PassportInput } from '@ag2net/protocol';
import type { Command } from 'commander';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { IntFlag, actionOn, type CommandEnv } from '../env.js';
import { usageError } from '../exit.js';
import type { CliIo } from '../io.js';
import { NameBook, printEnvelope } from '../render.js';
import type { Target } from '../session.js';

const ChatOptions = z.object({
  type: z.enum(['consulting', 'conversation']).default('conversation'),
  apiKey: z.string().min(1).optional(),
  credsDir: z.string().min(1).optional(),
  wait: IntFlag.default(60_000),
});

/** Where a person's issued credentials are kept between chats, below the home directory. */
const DEFAULT_CREDS_DIR = join('.ag2net', 'creds');

/**
 * `ag2net chat <agent>`: talk to an agent as a person. The person (`--as`, default the login name) is attached or
 * registered as a `human` identity, opens a channel with the agent, posts each line read from standard input, and
 * prints what the others post. At end of input it waits for the answer to the last line (`--wait`), then closes the
 * channel; Ctrl-C closes it at once.
 */
export function chatCommand(program: Command, io: CliIo): void {
  program
    .command('chat')
    .description('open a channel with an agent as a person and talk from the terminal (a line is a message)')
    .argument('<agent>', 'the agent to talk to (name or id)')
    .option('--type <type>', 'conversation (free turns, default) or consulting (one question, one answer)')
    .option('--api-key <key>', "the hub's admission key for registering the person (env AG2NET_API_KEY)")
    .option('--creds-dir <dir>', `where the person's issued credentials are kept (default ~/${DEFAULT_CREDS_DIR})`)
    .option('--wait <ms>', 'at end of input, how long to wait for the last answer (default 60000)')
    .action(
      actionOn(io, ChatOptions, async (env, agent, opts) => {
        const session = await env.session();
        const me = session.target.as ?? io.env['USER'] ?? 'cli-user';
        const apiKey = opts.apiKey ?? io.env['AG2NET_API_KEY'];
        const passport: PassportInput = {
          name: me,
          kind: 'human',
          ...(apiKey === undefined || apiKey === '' ? {} : { auth: { scheme: 'api_key', claim: { token: apiKey } } }),
        };
        const human = await session.hub.attachHuman(me, {
          passport,
          ...(session.target.creds === null ? {} : { credsPath: await personCredsPath(session.target, me, opts) }),
        });
        try {
          // Looked up as the person: on a secured hub the registrant's connection may not read the directory.
          const targetId = (await human.hub.getAgent(agent)).agent_id ?? agent;
          await converse(env, human, { agent, targetId, ...opts });
        } finally {
          await human.disconnect({ graceMs: 0 });
        }
      }),
    );
}

/**
 * Where a person's credentials are kept on a secured deployment (the connection has credentials): the hub issues
 * them at the first chat, the client writes them (0600) and renews them, and the next chat attaches with them.
 */
async function personCredsPath(
  target: Target,
  me: string,
  opts: { readonly credsDir?: string | undefined },
): Promise<string> {
  const dir = opts.credsDir ?? join(homedir(), DEFAULT_CREDS_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${target.prefix}-${me}.creds`);
}

interface Conversation {
  readonly agent: string;
  readonly targetId: string;
  readonly type: 'consulting' | 'conversation';
  readonly wait: number;
}

async function converse(env: CommandEnv, human: HumanClient, args: Conversation): Promise<void> {
  if (args.targetId === human.agentId) throw usageError('a person cannot chat with themselves');
  const channel = await human.open({ type: args.type, target: args.targetId });
  const names = new NameBook(human.hub);
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
