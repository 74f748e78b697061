import { AuditKind } from '@ag2net/protocol';
import type { HubEnv, HomeStores } from '../partition/hub-parts.js';

import type { Quarantine, QuarantinedRecord } from '../base/quarantined-record.js';

export type { Quarantine, QuarantinedRecord } from '../base/quarantined-record.js';

/** What counting and auditing a quarantined record uses. */
export type QuarantineDeps = Pick<HubEnv, 'logger' | 'counters' | 'quarantinedIds'> & Pick<HomeStores, 'audit'>;

/**
 * Collects what hydrate refuses to fold: each record gets one short log line and is counted and audited by
 * `auditQuarantined`, so hydrating the same garbage again within the audit stream's duplicate window stores one
 * record, not one per term.
 */
export class QuarantineLog {
  readonly #writes: Promise<void>[] = [];

  constructor(private readonly ctx: QuarantineDeps) {}

  readonly note: Quarantine = (record) => {
    this.ctx.logger.warn({ ...record }, 'quarantined a record the hub did not write; skipping it');
    this.#writes.push(auditQuarantined(this.ctx, record));
  };

  /** Waits for the audit records (their failures are logged, never thrown). */
  async flush(): Promise<void> {
    await Promise.all(this.#writes.splice(0));
  }
}

/**
 * Counts a quarantined record in `ctx.counters.quarantined` and stores its `quarantined` audit record. Every path
 * that skips records (hydrate, delivery, the writer's catch-up, the lease) reports through here, and the same record
 * found by several of them counts once in this hub: the audit id is derived from the record's place (source, key,
 * sequence), and the hub keeps the ids it counted. A failed audit write is logged, never thrown.
 */
export async function auditQuarantined(ctx: QuarantineDeps, record: QuarantinedRecord): Promise<void> {
  const id = `quarantine-${record.source}-${record.seq}-${safeToken(record.key)}`.slice(0, 128);
  if (!ctx.quarantinedIds.has(id)) {
    ctx.quarantinedIds.add(id);
    ctx.counters.quarantined += 1;
  }
  await ctx.audit.recordAfter(
    AuditKind.Quarantined,
    { source: record.source, key: record.key, seq: record.seq, reason: record.reason.slice(0, 500) },
    { id },
  );
}

/**
 * Quarantines a value at the lease key that no hub wrote (the lease trusts it for nothing, see `Lease`): one warning
 * naming the key and the revision, never the value, and counted and audited once like any quarantined record.
 */
export async function quarantineLeaseValue(ctx: QuarantineDeps, key: string, revision: number): Promise<void> {
  ctx.logger.warn({ key, revision }, 'quarantined a value at the lease key no hub wrote');
  await auditQuarantined(ctx, { source: 'leases', key, seq: revision, reason: "not a hub's lease record" });
}

function safeToken(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The message of a thrown value, for a quarantine reason. */
export function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
