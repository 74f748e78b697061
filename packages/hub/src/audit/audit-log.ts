import {
  HUB_OPS,
  IdSchema,
  type HubNames,
  type HubRequestParsed,
  type HubResponse,
  type IdFactory,
} from '@ag2net/protocol';
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { isoAt, type Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { AuditKind } from './kinds.js';

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

/** Fields of a record that name an agent, in any role. */
const AGENT_FIELDS = ['agent_id', 'creator_id', 'owner_id'] as const;
const AGENT_LIST_FIELDS = ['participants', 'violators'] as const;

/**
 * The hub's audit trail: one JetStream message per record on `<prefix>.audit.<kind>` in the `<P>_AUDIT` stream,
 * JSON `{ id, kind, at, …fields }` with AG2's field names.
 */
export class AuditLog {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: HubNames,
    private readonly clock: Clock,
    private readonly ids: IdFactory,
    private readonly logger: Logger,
  ) {}

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

  /** The records matching `filter`, oldest first, at most `filter.limit`; a record stored twice is returned once. */
  async read(filter: AuditFilter): Promise<AuditRecord[]> {
    const single = filter.kinds.length === 1 ? filter.kinds[0] : undefined;
    const subject =
      single !== undefined && IdSchema.safeParse(single).success
        ? this.names.audit(single)
        : `${this.names.prefix}.audit.>`;
    // An ordered consumer over a subject without messages would wait forever: count first.
    const info = await this.jsm.streams.info(this.names.auditStream, { subjects_filter: subject });
    const stored = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    const out: AuditRecord[] = [];
    if (stored === 0) return out;
    const consumer = await this.js.consumers.get(this.names.auditStream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.All,
    });
    const seen = new Set<string>();
    const messages = await consumer.consume({ max_messages: 1000 });
    try {
      for await (const m of messages) {
        const parsed = AuditRecordSchema.safeParse(safeJson(m.string()));
        if (parsed.success && !seen.has(parsed.data.id) && matches(parsed.data, filter)) {
          seen.add(parsed.data.id);
          out.push(parsed.data);
        }
        if (m.info.pending === 0 || out.length >= filter.limit) break;
      }
    } finally {
      messages.stop();
      await consumer.delete().catch(() => undefined);
    }
    return out;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function matches(record: AuditRecord, filter: AuditFilter): boolean {
  if (filter.kinds.length > 0 && !filter.kinds.includes(record.kind)) return false;
  if (filter.channel_id !== null && record['channel_id'] !== filter.channel_id) return false;
  if (filter.agent_id !== null && !namesAgent(record, filter.agent_id)) return false;
  const at = Date.parse(record.at);
  if (filter.since !== null && at < Date.parse(filter.since)) return false;
  if (filter.until !== null && at >= Date.parse(filter.until)) return false;
  return true;
}

function namesAgent(record: AuditRecord, agentId: string): boolean {
  if (AGENT_FIELDS.some((f) => record[f] === agentId)) return true;
  return AGENT_LIST_FIELDS.some((f) => {
    const list = record[f];
    return Array.isArray(list) && list.includes(agentId);
  });
}
