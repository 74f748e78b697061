/** One record the hub refused to fold: where it is and why. */
export interface QuarantinedRecord {
  /** `wal` for a WAL message, else the KV bucket's role (`agents`, `channels`, `tasks`, `snapshots`, `leases`). */
  readonly source: 'wal' | 'agents' | 'channels' | 'tasks' | 'snapshots' | 'leases';
  /** The WAL subject, the KV key, or (`leases`) the lease key's subject. */
  readonly key: string;
  /** The stream sequence (WAL) or KV revision of the record. */
  readonly seq: number;
  readonly reason: string;
}

/**
 * Reports a skipped record; synchronous, so that loaders can call it mid-scan. Kept apart from `QuarantineLog` (which
 * needs the hub context) so that the tables the context holds can take one without importing the context.
 */
export type Quarantine = (record: QuarantinedRecord) => void;
