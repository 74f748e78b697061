import { auditRecordMatches, type AuditRecordFilter } from '@ag2net/protocol/internal';
import { HUB_OPS, type HubResponse } from '@ag2net/protocol';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { IntFlag, action, type CommandEnv } from '../env.js';
import { usageError } from '../exit.js';
import type { CliIo } from '../io.js';
import type { Output } from '../output.js';
import { NameBook, shortTime } from '../render.js';
import { resolveChannelId } from '../resolve.js';
import type { Session } from '../session.js';

const AuditOptions = z.object({
  kind: z.array(z.string().min(1)).default([]),
  channel: z.string().optional(),
  agent: z.string().optional(),
  since: z.string().optional(),
  until: z.string().optional(),
  limit: IntFlag.default(1000),
  follow: z.boolean().default(false),
});

/** One audit record: `{ id, kind, at, …fields }`. */
type AuditRecord = HubResponse<'readAudit'>['records'][number];
const AuditRecordSchema = HUB_OPS.readAudit.response.shape.records.element;

/** `ag2net audit`: the hub's audit trail through `readAudit` as the operator; `--follow` then streams new records. */
export function auditCommand(program: Command, io: CliIo): void {
  program
    .command('audit')
    .description('the audit trail, oldest first (operators: --operator)')
    .addOption(
      new Option(
        '--kind <kind>',
        'only records of this kind (repeatable): channel_closed, expectation_violated, …',
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .option('--channel <channel>', 'only records of this channel (id, or the start of one)')
    .option('--agent <agent>', 'only records that name this agent in any role (name or id)')
    .option('--since <time>', 'from this time: ISO-8601, or an age such as 30m, 2h, 1d')
    .option('--until <time>', 'before this time: ISO-8601, or an age')
    .option('--limit <n>', 'at most this many records before following (default 1000)')
    .option('-f, --follow', 'keep printing new records until Ctrl-C (with --json: one JSON line each)')
    .action(
      action(io, AuditOptions, async (env, opts) => {
        const session = await env.session();
        const caller = opts.follow ? session.requireJetStream('audit --follow') : session.requireOperator('audit');
        const names = new NameBook(session.hub);
        const now = Date.now();
        const filter: AuditRecordFilter = {
          kinds: opts.kind,
          channel_id: opts.channel === undefined ? null : await resolveChannelId(session.hub, opts.channel, { caller }),
          agent_id: opts.agent === undefined ? null : await session.agentId(opts.agent),
          since: opts.since === undefined ? null : timeArg(opts.since, now, '--since'),
          until: opts.until === undefined ? null : timeArg(opts.until, now, '--until'),
        };
        // The stream's end before the first read: following starts after it, and records read twice are dropped.
        const followFrom = opts.follow ? (await auditStreamEnd(session)) + 1 : 0;
        const records: AuditRecord[] = [];
        let cursor: string | null = null;
        do {
          const page: HubResponse<'readAudit'> = await session.hub.call(
            'readAudit',
            { ...filter, limit: Math.min(HUB_PAGE, opts.limit - records.length), cursor },
            { caller },
          );
          records.push(...page.records);
          cursor = page.next_cursor;
        } while (cursor !== null && records.length < opts.limit);
        if (env.out.json && !opts.follow) return env.out.data(records);
        for (const r of records) await printRecord(env.out, r, { names, stream: true });
        if (opts.follow) await followAudit(env, session, { filter, from: followFrom, seen: records, names });
      }),
    );
}

/** The largest page of `readAudit` the hub serves. */
const HUB_PAGE = 10_000;

async function auditStreamEnd(session: Session): Promise<number> {
  const jsm = await jetstreamManager(session.nc, { checkAPI: false });
  return (await jsm.streams.info(session.names.auditStream)).state.last_seq;
}

async function followAudit(
  env: CommandEnv,
  session: Session,
  args: {
    readonly filter: AuditRecordFilter;
    readonly from: number;
    readonly seen: readonly AuditRecord[];
    readonly names: NameBook;
  },
): Promise<void> {
  const seen = new Set(args.seen.map((r) => r.id));
  const consumer = await jetstream(session.nc, { checkAPI: false }).consumers.get(session.names.auditStream, {
    filter_subjects: `${session.names.prefix}.audit.>`,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: args.from,
  });
  const messages = await consumer.consume();
  const stop = (): void => void messages.close();
  env.io.signal.addEventListener('abort', stop, { once: true });
  env.out.progress('following the audit trail (Ctrl-C to stop)');
  try {
    for await (const m of messages) {
      const parsed = AuditRecordSchema.safeParse(safeJson(m.string()));
      if (!parsed.success || seen.has(parsed.data.id) || !auditRecordMatches(parsed.data, args.filter)) continue;
      seen.add(parsed.data.id);
      await printRecord(env.out, parsed.data, { names: args.names, stream: true });
    }
  } finally {
    env.io.signal.removeEventListener('abort', stop);
    await messages.close().catch(() => undefined);
  }
}

/** Fields of a record that name one agent, and fields that list agents: shown by name. */
const AGENT_FIELDS: ReadonlySet<string> = new Set(['agent_id', 'creator_id', 'owner_id', 'sender_id', 'target_id']);
const AGENT_LIST_FIELDS: ReadonlySet<string> = new Set(['participants', 'violators', 'audience']);

async function printRecord(
  out: Output,
  record: AuditRecord,
  options: { readonly names: NameBook; readonly stream?: boolean },
): Promise<void> {
  if (out.json) return out.data(record, { stream: options.stream ?? false });
  const { names } = options;
  const { id: _id, kind, at, ...fields } = record;
  const tone = /violat|fail|dead|quarantin|denied/.test(kind) ? 'bad' : 'accent';
  const shown = await Promise.all(
    Object.entries(fields).map(async ([k, v]) => {
      if (AGENT_FIELDS.has(k) && typeof v === 'string') return `${k.replace(/_id$/, '')}=${await names.name(v)}`;
      if (AGENT_LIST_FIELDS.has(k) && Array.isArray(v) && v.every((x) => typeof x === 'string')) {
        return `${k}=${(await names.names(v)).join(',')}`;
      }
      return `${k}=${typeof v === 'string' ? v : JSON.stringify(names.withNames(v))}`;
    }),
  );
  out.line(`${out.paint('dim', shortTime(at))} ${out.paint(tone, kind)} ${shown.join(' ')}`.trimEnd());
}

/** An ISO-8601 time, or an age (`30s`, `15m`, `2h`, `7d`) before `nowMs`, as ISO-8601. */
export function timeArg(value: string, nowMs: number, flag: string): string {
  const age = /^(\d+)([smhd])$/.exec(value);
  if (age?.[1] !== undefined && age[2] !== undefined) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2]] ?? 0;
    return new Date(nowMs - Number(age[1]) * unit).toISOString();
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw usageError(`${flag} must be an ISO-8601 time or an age such as 30m, got ${value}`);
  return new Date(at).toISOString();
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
