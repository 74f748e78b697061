// What the audit view shows of a record in its table: who it is about and a one-line summary per kind. The record's
// fields are the hub's (packages/hub/src/audit): read loosely, a missing field reads as empty.

type Fields = Readonly<Record<string, unknown>>;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function ids(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v: unknown): v is string => typeof v === 'string') : [];
}

/** Fields the table shows elsewhere (or that say nothing in one line). */
const NOT_SUMMARISED = new Set(['id', 'kind', 'at', 'channel_id', 'agent_id', 'detail', 'params', 'envelope']);

/**
 * The agents a record is about, by name: its `agent_id`, else a violation's violators, else a channel's creator, else
 * a task's owner. Empty when it names none.
 */
export function auditAgents(record: Fields, nameOf: (id: string) => string): string {
  const agent = str(record['agent_id']);
  if (agent !== '') return nameOf(agent);
  const violators = ids(record['violators']);
  if (violators.length > 0) return violators.map(nameOf).join(', ');
  for (const key of ['creator_id', 'owner_id']) {
    const id = str(record[key]);
    if (id !== '') return nameOf(id);
  }
  return '';
}

/** One line saying what happened, by kind: never blank when the record carries anything. */
export function auditSummary(record: Fields & { kind: string }, nameOf: (id: string) => string): string {
  const reason = str(record['reason']);
  switch (record.kind) {
    case 'expectation_violated': {
      const violators = ids(record['violators']).map(nameOf);
      const action = str(record['on_violation']);
      return `${str(record['expectation']) || 'an expectation'} violated${
        violators.length > 0 ? ` by ${violators.join(', ')}` : ''
      }${action === '' ? '' : ` → ${action}`}`;
    }
    case 'channel_created': {
      const participants = ids(record['participants']).map(nameOf);
      const creator = str(record['creator_id']);
      return `${str(record['manifest_type']) || 'channel'} opened${creator === '' ? '' : ` by ${nameOf(creator)}`}${
        participants.length > 0 ? ` with ${participants.join(', ')}` : ''
      }`;
    }
    case 'turn_failed': {
      const type = str(record['exc_type']);
      const message = str(record['exc_message']) || reason;
      if (type !== '' || message !== '') return [type, message].filter((t) => t !== '').join(': ');
      break;
    }
    case 'agent_registered':
    case 'agent_unregistered': {
      const name = str(record['name']);
      if (name !== '') return `${record.kind === 'agent_registered' ? 'registered' : 'unregistered'} ${name}`;
      break;
    }
    case 'channel_closed':
    case 'channel_expired':
      return reason === '' ? 'no reason given' : reason;
    default:
      break;
  }
  if (reason !== '') return reason;
  const error = str(record['error']);
  if (error !== '') return error;
  return Object.entries(record)
    .filter(([k, v]) => !NOT_SUMMARISED.has(k) && (typeof v === 'string' || typeof v === 'number') && v !== '')
    .slice(0, 3)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(' · ');
}
