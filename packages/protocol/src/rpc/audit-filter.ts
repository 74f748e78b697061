import type { AuditRecord, HubRequestParsed } from './ops.js';

/** The record filter of a `readAudit` request, defaults applied: kinds, channel, agent and time window. */
export type AuditRecordFilter = Pick<
  HubRequestParsed<'readAudit'>,
  'kinds' | 'channel_id' | 'agent_id' | 'since' | 'until'
>;

/** Fields of a record that name one agent, and fields that list agents. */
const AGENT_FIELDS = ['agent_id', 'creator_id', 'owner_id'] as const;
const AGENT_LIST_FIELDS = ['participants', 'violators'] as const;

/**
 * Whether an audit record passes a `readAudit` filter: one of `kinds` (any kind when empty), of `channel_id`, naming
 * `agent_id` in any role (`agent_id`, `creator_id`, `owner_id`, `participants`, `violators`), and `at` within
 * `since` (inclusive) to `until` (exclusive). The hub answers `readAudit` with it, and a follower of the audit
 * stream applies the same filter to what it reads live.
 */
export function auditRecordMatches(record: AuditRecord, filter: AuditRecordFilter): boolean {
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
