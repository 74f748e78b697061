/**
 * The kinds of audit records the hub writes (`kind` of an `AuditRecord`, the filter of `readAudit`): AG2's
 * `AUDIT_KIND_*` values, plus `task_event` (a task event reported by an agent runtime, e.g. `mirror_failed`, which
 * AG2 only handed to listeners). The set is open: readers keep records of kinds they do not know.
 */
export const AuditKind = {
  AgentRegistered: 'agent_registered',
  AgentUnregistered: 'agent_unregistered',
  /** The operator revoked an identity (`revokeIdentity`): `agent_id`, `name`. */
  AgentRevoked: 'agent_revoked',
  /** The operator re-admitted a revoked identity (`readmitIdentity`): `agent_id`, `name`. */
  AgentReadmitted: 'agent_readmitted',
  ResumeSet: 'resume_set',
  SkillSet: 'skill_set',
  RuleSet: 'rule_set',
  ChannelCreated: 'channel_created',
  ChannelClosed: 'channel_closed',
  ChannelExpired: 'channel_expired',
  /**
   * The history retention removed an ended channel's log and snapshots: `channel_id`, `closed_at`, `expired_at`,
   * `purged` (the WAL messages removed).
   */
  ChannelHistoryRemoved: 'channel_history_removed',
  ExpectationViolated: 'expectation_violated',
  TaskTerminated: 'task_terminated',
  TaskEvent: 'task_event',
  TurnFailed: 'turn_failed',
  /** A delivery given up after its retries: the envelope, its stream sequence and the reason. */
  DeliveryDeadLettered: 'delivery_dead_lettered',
  /** A user violation handler threw, rejected or timed out. */
  ViolationHandlerFailed: 'violation_handler_failed',
  /**
   * A WAL message, KV record or lease value no hub wrote, which the hub skipped (hydrate, delivery, the writer's
   * catch-up before an append) or did not trust (the lease): `source`, `key`, `seq`, `reason`.
   */
  Quarantined: 'quarantined',
} as const;
export type AuditKind = (typeof AuditKind)[keyof typeof AuditKind];

/** `source` of a `resume_set` record: the tenant set the resume, or the hub recorded an observation into it. */
export const ResumeSource = { Tenant: 'tenant', Observed: 'observed' } as const;
export type ResumeSource = (typeof ResumeSource)[keyof typeof ResumeSource];
