import { EnvelopeSchema, OPERATOR_CALLER, hubNames, participantIds, type Envelope } from '@ag2net/protocol';
import { pause } from '@ag2net/protocol/internal';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Command } from 'commander';
import { z } from 'zod';
import { IntFlag, action, actionOn, type CommandEnv } from '../env.js';
import { usageError } from '../exit.js';
import { historyRefusal, requireHistory } from '../expired-history.js';
import { FOLLOW_POLL_MS } from '../follow.js';
import type { CliIo } from '../io.js';
import { NameBook, envelopePrinter } from '../render.js';
import { resolveChannelId } from '../resolve.js';
import type { Session } from '../session.js';

const WalOptions = z.object({
  since: IntFlag.default(1),
  limit: IntFlag.optional(),
  follow: z.boolean().default(false),
});

const TailOptions = z.object({
  channel: z.string().optional(),
  agent: z.string().optional(),
  type: z.string().optional(),
  all: z.boolean().default(false),
  max: IntFlag.optional(),
});

/** The most envelopes one `readWal` page asks for. */
const PAGE = 1000;

/**
 * `ag2net wal <channel>` (a channel's log through `readWal`: a participant sees what its audience lets it see, the
 * operator everything) and `ag2net tail` (every admitted envelope of every channel, live; operators). A channel whose
 * history expired has no log left to show: both say so in one line (`expiredHistoryLine`) and exit 3. Both end each
 * answer's line with its turn report (`turnSuffix`), which a conversation (`chat`) leaves out.
 */
export function walCommands(program: Command, io: CliIo): void {
  program
    .command('wal')
    .description("a channel's log, oldest first: what the caller may see (everything with --operator)")
    .argument('<channel>', 'channel id, or the start of one')
    .option('--since <seq>', 'first sequence (default 1)')
    .option('--limit <n>', 'at most this many envelopes, then the --since that continues')
    .option('-f, --follow', 'keep printing new envelopes until Ctrl-C (with --json: one JSON line each)')
    .action(
      actionOn(io, WalOptions, async (env, arg, opts) => {
        const session = await env.session();
        const caller = await session.requireCaller('wal');
        const names = new NameBook(session.hub);
        const channel = await resolveChannelId(session.hub, arg, { caller, names });
        await readLog(env, session, { channel, caller, names, ...opts });
      }),
    );
  program
    .command('tail')
    .description('every admitted envelope of every channel as it is admitted (operators: --operator)')
    .option('--channel <channel>', 'only this channel (id, or the start of one)')
    .option('--agent <agent>', 'only envelopes this agent sent or was addressed in (name or id)')
    .option('--type <event>', 'only this event type (a trailing * matches a prefix: ag2.channel.*)')
    .option('--all', 'start from the oldest envelope, not from now')
    .option('--max <n>', 'stop after this many envelopes')
    .action(
      action(io, TailOptions, async (env, opts) => {
        const session = await env.session();
        session.requireJetStream('tail');
        await tail(env, session, opts);
      }),
    );
}

interface ReadLog {
  readonly channel: string;
  readonly caller: string;
  readonly names: NameBook;
  readonly since: number;
  readonly limit?: number | undefined;
  readonly follow: boolean;
}

async function readLog(env: CommandEnv, session: Session, args: ReadLog): Promise<void> {
  if (args.follow && args.limit !== undefined) throw usageError('--limit and --follow do not go together');
  const { names } = args;
  const meta = (await session.hub.call('getChannel', { channel_id: args.channel }, { caller: args.caller })).channel;
  requireHistory(meta);
  // The participants' names first, so that event data naming them reads with names.
  if (!env.out.json) await names.names(participantIds(meta));
  try {
    await printLog(env, session, args);
  } catch (err) {
    throw historyRefusal(err, meta);
  }
}

async function printLog(env: CommandEnv, session: Session, args: ReadLog): Promise<void> {
  const { names } = args;
  const collected: Envelope[] = [];
  let since = args.since;
  let printed = 0;
  let last = 0;
  let more: number | null = null;
  const print = envelopePrinter(env.out, names, { turns: true });
  // The pages of the requested range; then, with --follow, whatever the log gains, asked for every FOLLOW_POLL_MS.
  for (;;) {
    const page = await session.hub.call(
      'readWal',
      { channel_id: args.channel, since, limit: Math.min(PAGE, (args.limit ?? Infinity) - printed) },
      { caller: args.caller },
    );
    for (const e of page.envelopes) {
      if (!env.out.json) await print(e);
      else if (args.follow) env.out.data(e, { stream: true });
      else collected.push(e);
    }
    printed += page.envelopes.length;
    last = page.last_sequence;
    if (page.next_since !== null) {
      since = page.next_since;
      if (args.limit === undefined || printed < args.limit) continue;
      more = since;
      break;
    }
    since = Math.max(since, last + 1);
    if (!args.follow || !(await pause(FOLLOW_POLL_MS, env.io.signal))) break;
  }
  if (env.out.json && !args.follow) {
    env.out.data({ channel_id: args.channel, envelopes: collected, last_sequence: last, next_since: more });
  } else if (more !== null) {
    env.out.line(env.out.paint('dim', `more: --since ${more}`));
  }
}

async function tail(env: CommandEnv, session: Session, opts: z.output<typeof TailOptions>): Promise<void> {
  const names = new NameBook(session.hub);
  const print = envelopePrinter(env.out, names, { turns: true });
  const agentId = opts.agent === undefined ? null : await session.agentId(opts.agent);
  const channel =
    opts.channel === undefined
      ? undefined
      : await resolveChannelId(session.hub, opts.channel, { caller: OPERATOR_CALLER, names });
  if (channel !== undefined) {
    const meta = await session.hub.call('getChannel', { channel_id: channel }, { caller: OPERATOR_CALLER });
    requireHistory(meta.channel);
  }
  // A partitioned prefix files a channel's entries under its partition (`<p>.wal.<k>.<channel_id>`).
  const partitioned = hubNames(session.names.prefix, await session.hub.partitions());
  const subject = channel === undefined ? partitioned.walAll : partitioned.wal(channel);
  const jsm = await jetstreamManager(session.nc, { checkAPI: false });
  // From the stream's current end (read before following, so nothing admitted after this line is missed).
  const info = await jsm.streams.info(session.names.walStream);
  const start = opts.all ? 1 : info.state.last_seq + 1;
  const consumer = await jetstream(session.nc, { checkAPI: false }).consumers.get(session.names.walStream, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: start,
  });
  const messages = await consumer.consume();
  const stop = (): void => void messages.close();
  env.io.signal.addEventListener('abort', stop, { once: true });
  env.out.progress(`following ${channel ?? 'every channel'} from WAL sequence ${start} (Ctrl-C to stop)`);
  let seen = 0;
  try {
    for await (const m of messages) {
      const parsed = EnvelopeSchema.safeParse(safeJson(m.string()));
      if (!parsed.success) {
        env.out.progress(`skipped WAL message ${m.seq}: not an envelope`);
        continue;
      }
      const e = parsed.data;
      if (!matchesTail(e, agentId, opts.type)) continue;
      if (env.out.json) env.out.data(e, { stream: true });
      else await print(e);
      seen += 1;
      if (opts.max !== undefined && seen >= opts.max) break;
    }
  } finally {
    env.io.signal.removeEventListener('abort', stop);
    await messages.close().catch(() => undefined);
  }
}

function matchesTail(e: Envelope, agentId: string | null, type: string | undefined): boolean {
  if (agentId !== null && e.sender_id !== agentId && !(e.audience ?? []).includes(agentId)) return false;
  if (type === undefined) return true;
  return type.endsWith('*') ? e.event_type.startsWith(type.slice(0, -1)) : e.event_type === type;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
