import { AuditKind } from '@ag2net/protocol';
import type { HubContext } from './context.js';

import type { Quarantine } from './quarantined-record.js';

export type { Quarantine, QuarantinedRecord } from './quarantined-record.js';

/**
 * Collects what hydrate refuses to fold: each record counts in `ctx.counters.quarantined`, gets one short log line
 * and one `quarantined` audit record. The audit id is derived from the record's place (source, key, sequence), so
 * hydrating the same garbage again within the audit stream's duplicate window stores one record, not one per term.
 */
export class QuarantineLog {
  readonly #writes: Promise<void>[] = [];

  constructor(private readonly ctx: HubContext) {}

  readonly note: Quarantine = (record) => {
    this.ctx.counters.quarantined += 1;
    this.ctx.logger.warn({ ...record }, 'quarantined a record the hub did not write; skipping it');
    const id = `quarantine-${record.source}-${record.seq}-${safeToken(record.key)}`.slice(0, 128);
    this.#writes.push(
      this.ctx.audit.recordAfter(
        AuditKind.Quarantined,
        { source: record.source, key: record.key, seq: record.seq, reason: record.reason.slice(0, 500) },
        { id },
      ),
    );
  };

  /** Waits for the audit records (their failures are logged, never thrown). */
  async flush(): Promise<void> {
    await Promise.all(this.#writes.splice(0));
  }
}

function safeToken(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The message of a thrown value, for a quarantine reason. */
export function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
