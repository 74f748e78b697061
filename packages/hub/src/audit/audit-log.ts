import {
  HUB_OPS,
  IdSchema,
  InvalidRequestError,
  type HubNames,
  type HubResponse,
  type IdFactory,
} from '@ag2net/protocol';
import { type HubRequestParsed, auditRecordMatches, LIST_PAGE_BYTES } from '@ag2net/protocol/internal';
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { isoAt, type Clock } from '../base/clock.js';
import { jsonBytes } from '../base/paging.js';
import type { Logger } from '../base/logger.js';
import type { AuditKind } from '@ag2net/protocol';

/** Options of `AuditLog.record`. */
export interface RecordOptions {
  /**
   * The record's id, also its JetStream message id, so that publishing the same record again (a redelivered WAL
   * message, a retried operation) within the stream's duplicate window stores it once. Default a fresh ULID.
   */
  readonly id?: string;
  /** When it happened (ISO-8601); default the hub clock's now. */
  readonly at?: string;
}

type AuditFilter = HubRequestParsed<'readAudit'>;
/** One audit record: `{ id, kind, at, …fields }` (the protocol's `AuditRecordSchema`). */
export type AuditRecord = HubResponse<'readAudit'>['records'][number];
const AuditRecordSchema = HUB_OPS.readAudit.response.shape.records.element;

/** How long a read waits for the next record before it ends the page (no record arrives after the last one). */
const AUDIT_READ_IDLE_MS = 3000;

/** What an `AuditLog` writes and reads with: the hub's JetStream, names, clock, ids and logger. */
export interface AuditLogDeps {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: HubNames;
  readonly clock: Clock;
  readonly ids: IdFactory;
  readonly logger: Logger;
}

/**
 * The hub's audit trail: one JetStream message per record on `<prefix>.audit.<kind>` in the `<P>_AUDIT` stream,
 * JSON `{ id, kind, at, …fields }` with AG2's field names.
 */
export class AuditLog {
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly names: HubNames;
  private readonly clock: Clock;
  private readonly ids: IdFactory;
  private readonly logger: Logger;

  constructor(deps: AuditLogDeps) {
    ({ js: this.js, jsm: this.jsm, names: this.names, clock: this.clock, ids: this.ids, logger: this.logger } = deps);
  }

  /** Stores a record; throws when the stream does not take it. */
  async record(kind: AuditKind, fields: Record<string, unknown>, options: RecordOptions = {}): Promise<void> {
    const id = options.id ?? this.ids(this.clock.now());
    const record = { ...fields, id, kind, at: options.at ?? isoAt(this.clock.now()) };
    await this.js.publish(this.names.audit(kind), JSON.stringify(record), { msgID: id });
  }

  /**
   * Stores a record of something that already happened and cannot be undone by failing: a failure is logged, not
   * thrown, so the operation still answers.
   */
  async recordAfter(kind: AuditKind, fields: Record<string, unknown>, options: RecordOptions = {}): Promise<void> {
    try {
      await this.record(kind, fields, options);
    } catch (err) {
      this.logger.error({ err, kind }, 'audit record lost');
    }
  }

  /**
   * The records matching `filter`, oldest first: one page of at most `filter.limit` records and
   * `budgetBytes` (default `LIST_PAGE_BYTES`), and the cursor of the next page (the stream sequence to read from, in decimal; `null`
   * when nothing is left). A record stored twice is returned once within a page.
   */
  async read(filter: AuditFilter, budgetBytes: number = LIST_PAGE_BYTES): Promise<AuditPage> {
    const start = startSequenceOf(filter.cursor);
    const single = filter.kinds.length === 1 ? filter.kinds[0] : undefined;
    const subject =
      single !== undefined && IdSchema.safeParse(single).success
        ? this.names.audit(single)
        : `${this.names.prefix}.audit.>`;
    // An ordered consumer over a subject without messages would wait forever: count first.
    const info = await this.jsm.streams.info(this.names.auditStream, { subjects_filter: subject });
    const stored = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    const records: AuditRecord[] = [];
    if (stored === 0 || start > info.state.last_seq) return { records, next_cursor: null };
    const consumer = await this.js.consumers.get(this.names.auditStream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: start,
    });
    const seen = new Set<string>();
    let bytes = 0;
    let nextCursor: string | null = null;
    const messages = await consumer.consume({ max_messages: 1000 });
    // A cursor may point past the last record of the filtered subjects (stale, or chosen by the caller): the
    // consumer would then wait forever. Nothing arriving for a while ends the page instead.
    let idle = setTimeout(() => messages.stop(), AUDIT_READ_IDLE_MS);
    try {
      for await (const m of messages) {
        clearTimeout(idle);
        idle = setTimeout(() => messages.stop(), AUDIT_READ_IDLE_MS);
        const parsed = AuditRecordSchema.safeParse(safeJson(m.string()));
        if (parsed.success && !seen.has(parsed.data.id) && auditRecordMatches(parsed.data, filter)) {
          const size = jsonBytes(parsed.data);
          if (records.length > 0 && bytes + size > budgetBytes) {
            nextCursor = String(m.seq);
            break;
          }
          bytes += size;
          seen.add(parsed.data.id);
          records.push(parsed.data);
        }
        if (m.info.pending === 0) break;
        if (records.length >= filter.limit) {
          nextCursor = String(m.seq + 1);
          break;
        }
      }
    } finally {
      clearTimeout(idle);
      messages.stop();
      await consumer.delete().catch(() => undefined);
    }
    return { records, next_cursor: nextCursor };
  }
}

/** One page of `read`. */
export type AuditPage = HubResponse<'readAudit'>;

function startSequenceOf(cursor: string | null): number {
  if (cursor === null) return 1;
  if (!/^\d{1,15}$/.test(cursor) || cursor === '0') {
    throw new InvalidRequestError('cursor is not one this hub handed out');
  }
  return Number.parseInt(cursor, 10);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
