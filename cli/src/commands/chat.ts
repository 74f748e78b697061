import type { HumanClient } from '@ag2net/client';
import { EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED, EV_TEXT, type Envelope } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { attachPerson, personCredsPath, stackApiKey } from '../attach-person.js';
import { IntFlag, actionOn, type CommandEnv } from '../env.js';
import { usageError } from '../exit.js';
import { followLog } from '../follow.js';
import type { CliIo } from '../io.js';
import { NameBook, printEnvelope } from '../render.js';
import { resolveAgent } from '../resolve.js';

const ChatOptions = z.object({
  type: z.enum(['consulting', 'conversation']).default('conversation'),
  apiKey: z.string().min(1).optional(),
  wait: IntFlag.default(60_000),
  rekey: z.boolean().default(false),
});

/** How often a chat reads its channel's log for what the others posted, in ms. */
const CHAT_POLL_MS = 250;

/**
 * `ag2net chat <agent>`: talk to an agent as a person. The person (`--as`, default the login name) is attached or
 * registered as a `human` identity, opens a channel with the agent, posts each line read from standard input, and
 * prints what the others post. At end of input it waits for the answer to the last line (`--wait`), then closes the
 * channel; Ctrl-C closes it at once.
 *
 * On a secured stack it needs nothing more than `npm start` left in `.data/`: the registrant's credentials to connect,
 * the person's admission key from `api-keys.json` (`ag2net people add` writes one for a new name), and the person's
 * own credentials in `creds/<server>/<prefix>/<name>.creds`, written at the first chat and reused after. Beside the
 * bridge's secret (`bridge-secret`), the person's key is the one the console derives for the name, so the person who
 * chats here is the person who signs in there, whichever comes first.
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
    .option(
      '--rekey',
      "register the person again with the console's key, retiring the identity of the key in its .creds " +
        '(its open channels closed)',
    )
    .action(
      actionOn(io, ChatOptions, async (env, agent, opts) => {
        const session = await env.session('register');
        const { target } = session;
        const me = target.as ?? io.env['USER'] ?? 'cli-user';
        const apiKey = opts.apiKey ?? emptyToUndefined(io.env['AG2NET_API_KEY']) ?? (await stackApiKey(target, me));
        const credsPath = session.secured ? await personCredsPath(target, me) : undefined;
        const human = await attachPerson(env, session, { me, apiKey, credsPath, rekey: opts.rekey });
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
  // What the others post from now on, read from the channel's log (see `followLog`).
  const { last_sequence: last } = await human.hub.call(
    'readWal',
    { channel_id: channel.channelId, since: 1, limit: 1 },
    { caller: human.agentId },
  );
  const following = new AbortController();
  const log = followLog(human, channel.channelId, { since: last + 1, pollMs: CHAT_POLL_MS, signal: following.signal });
  const printing = (async () => {
    for await (const e of log) {
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
    following.abort();
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
