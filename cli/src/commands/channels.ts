import { ChannelStateSchema, isTerminalChannelState, participantIds, type ChannelMetadata } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { listChannelPages } from '../channel-pages.js';
import { IntFlag, NoOptions, action, actionOn } from '../env.js';
import type { CliIo } from '../io.js';
import type { Tone } from '../output.js';
import { historyRefusal, requireHistory } from '../expired-history.js';
import { describeGraph } from '../graph.js';
import { NameBook, shortTime } from '../render.js';
import { resolveChannelId } from '../resolve.js';
import type { Session } from '../session.js';

const LsOptions = z.object({
  state: ChannelStateSchema.optional(),
  type: z.string().optional(),
  agent: z.string().optional(),
  limit: IntFlag.default(100),
});

/**
 * `ag2net channels ls|show`. A caller sees the channels it is a participant of; the operator sees every channel. A
 * channel whose history expired is listed as `history expired`; `show` prints its metadata, then says so in one line
 * (`expiredHistoryLine`) and exits 3, as every command that needs a channel's history does.
 */
export function channelsCommand(program: Command, io: CliIo): void {
  const channels = program
    .command('channels')
    .description('channels the caller takes part in (every channel with --operator); without a subcommand, ls');
  channels
    .command('ls', { isDefault: true })
    .description('channels, newest last (the default)')
    .option('--state <state>', 'pending, active, closing, closed or expired')
    .option('--type <type>', 'consulting, conversation, discussion, workflow or a custom type')
    .option('--agent <agent>', 'only channels with this participant (name or id)')
    .option('--limit <n>', 'at most this many (default 100)')
    .action(
      action(io, LsOptions, async (env, opts) => {
        const session = await env.session();
        const caller = await session.requireCaller('channels ls');
        const agentId = opts.agent === undefined ? null : await session.agentId(opts.agent);
        // The type filter is applied here, so pages are read until enough channels of the type were seen.
        const list = await listChannelPages(
          session.hub,
          { agent_id: agentId, state: opts.state ?? null },
          {
            caller,
            keep: (c) => opts.type === undefined || c.manifest.type === opts.type,
            enough: (found) => found.length >= opts.limit,
          },
        );
        const shown = list.slice(0, opts.limit);
        if (env.out.json) return env.out.data(shown);
        const names = new NameBook(session.hub);
        const rows = await Promise.all(
          shown.map(async (c) => ({ c, participants: (await names.names(participantIds(c))).join(', ') })),
        );
        env.out.table(
          rows,
          [
            { header: 'id', cell: (r) => r.c.channel_id },
            { header: 'type', cell: (r) => r.c.manifest.type },
            { header: 'state', cell: (r) => stateOf(r.c), tone: (r) => stateTone(r.c) },
            { header: 'participants', cell: (r) => r.participants, max: 48 },
            { header: 'created', cell: (r) => shortTime(r.c.created_at) },
            { header: 'ends', cell: (r) => endOf(r.c) },
            { header: 'reason', cell: (r) => reasonOf(r.c), max: 32 },
          ],
          'no channels',
        );
      }),
    );
  channels
    .command('show')
    .description("one channel's metadata, participants and the adapter state the caller may see")
    .argument('<channel>', 'channel id, or the start of one')
    .action(
      actionOn(io, NoOptions, async (env, arg) => {
        const session = await env.session();
        const caller = await session.requireCaller('channels show');
        const names = new NameBook(session.hub);
        const channel = await resolveChannelId(session.hub, arg, { caller, names });
        const meta = (await session.hub.call('getChannel', { channel_id: channel }, { caller })).channel;
        const state = await adapterStateOf(session, meta, caller);
        if (env.out.json) {
          env.out.data({ channel: meta, state });
          requireHistory(meta);
          return;
        }
        const o = env.out;
        // Every participant's name first: the knobs and the adapter state then show names where they hold ids.
        await names.names([meta.creator_id, ...participantIds(meta)]);
        const { graph, ...knobs } = meta.knobs;
        const graphLines = graph === undefined ? null : describeGraph(graph, (id) => String(names.withNames(id)));
        const otherKnobs = graphLines === null ? meta.knobs : knobs;
        o.fields([
          ['id', meta.channel_id],
          ['type', `${meta.manifest.type} v${meta.manifest.version}`],
          ['state', o.paint(stateTone(meta) ?? 'ok', meta.state)],
          ['creator', await names.name(meta.creator_id)],
          ['created', meta.created_at],
          ['expires', meta.expires_at ?? '-'],
          ['closed', meta.closed_at === null ? '-' : `${meta.closed_at} (${meta.close_reason || 'no reason'})`],
          ...(meta.expired_at === undefined
            ? []
            : [['history', o.paint('bad', `expired at ${meta.expired_at}`)] as const]),
          ['pending acks', (await names.names(meta.pending_acks)).join(', ') || '-'],
          [
            'labels',
            Object.entries(meta.labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ') || '-',
          ],
          ['knobs', Object.keys(otherKnobs).length === 0 ? '-' : JSON.stringify(names.withNames(otherKnobs))],
        ]);
        if (graphLines !== null) {
          o.line();
          o.line(o.paint('head', 'graph'));
          for (const line of graphLines) o.line(`  ${line}`);
        }
        o.line();
        const people = await Promise.all(
          [...meta.participants]
            .sort((a, b) => a.order - b.order)
            .map(async (p) => ({ ...p, name: await names.name(p.agent_id) })),
        );
        o.table(
          people,
          [
            { header: 'name', cell: (p) => p.name, tone: () => 'accent' },
            { header: 'id', cell: (p) => p.agent_id },
            { header: 'role', cell: (p) => p.role },
            { header: 'joined', cell: (p) => shortTime(p.joined_at) },
          ],
          'no participants',
        );
        if (state !== null) {
          o.line();
          o.line(o.paint('head', 'adapter state'));
          o.line(JSON.stringify(names.withNames(state), null, 2));
        }
        requireHistory(meta);
      }),
    );
}

/**
 * The adapter state the caller may see of the channel; `null` for a channel whose history expired, which has none
 * left (the command shows its metadata, then says so).
 */
async function adapterStateOf(
  session: Session,
  meta: ChannelMetadata,
  caller: string,
): Promise<Record<string, unknown> | null> {
  if (meta.expired_at !== undefined) return null;
  try {
    return (await session.hub.call('adapterState', { channel_id: meta.channel_id }, { caller })).state;
  } catch (err) {
    throw historyRefusal(err, meta);
  }
}

/** A channel's state as the list shows it: `history expired` once its log was removed (its reason says how it ended). */
function stateOf(c: ChannelMetadata): string {
  return c.expired_at === undefined ? c.state : 'history expired';
}

function stateTone(c: ChannelMetadata): Tone | null {
  if (c.expired_at !== undefined) return 'dim';
  if (c.state === 'active') return 'ok';
  if (c.state === 'expired') return 'bad';
  if (isTerminalChannelState(c.state)) return 'dim';
  return 'warn';
}

/** When a channel ends: its TTL's expiry while it is open (`-` without one), when it ended once it has. */
function endOf(c: ChannelMetadata): string {
  if (isTerminalChannelState(c.state)) return shortTime(c.closed_at ?? c.expires_at);
  return shortTime(c.expires_at);
}

/** Why a channel ended (its close reason, else its state); `-` while it is open. */
function reasonOf(c: ChannelMetadata): string {
  if (!isTerminalChannelState(c.state)) return '-';
  return c.close_reason || c.state;
}
