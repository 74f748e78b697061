import { HUB_OPS, auditRecordMatches, type AuditRecordFilter, type HubResponse } from '@ag2net/protocol';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { IntFlag, action, type CommandEnv } from '../env.js';
import { usageError } from '../exit.js';
import type { CliIo } from '../io.js';
import type { Output } from '../output.js';
import { shortTime } from '../render.js';
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
    .option('--channel <channel>', 'only records of this channel')
    .option('--agent <agent>', 'only records that name this agent in any role (name or id)')
    .option('--since <time>', 'from this time: ISO-8601, or an age such as 30m, 2h, 1d')
    .option('--until <time>', 'before this time: ISO-8601, or an age')
    .option('--limit <n>', 'at most this many records before following (default 1000)')
    .option('-f, --follow', 'keep printing new records until Ctrl-C (with --json: one JSON line each)')
    .action(
      action(io, AuditOptions, async (env, opts) => {
        const session = await env.session();
        const caller = session.requireOperator('audit');
        const now = Date.now();
        const filter: AuditRecordFilter = {
          kinds: opts.kind,
          channel_id: opts.channel ?? null,
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
        for (const r of records) printRecord(env.out, r, { stream: true });
        if (opts.follow) await followAudit(env, session, { filter, from: followFrom, seen: records });
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
  args: { readonly filter: AuditRecordFilter; readonly from: number; readonly seen: readonly AuditRecord[] },
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
      printRecord(env.out, parsed.data, { stream: true });
    }
  } finally {
    env.io.signal.removeEventListener('abort', stop);
    await messages.close().catch(() => undefined);
  }
}

function printRecord(out: Output, record: AuditRecord, options: { readonly stream?: boolean } = {}): void {
  if (out.json) return out.data(record, { stream: options.stream ?? false });
  const { id: _id, kind, at, ...fields } = record;
  const tone = /violat|fail|dead|quarantin|denied/.test(kind) ? 'bad' : 'accent';
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  out.line(`${out.paint('dim', shortTime(at))} ${out.paint(tone, kind)} ${rest}`.trimEnd());
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
