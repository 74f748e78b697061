import { describe, expect, it } from 'vitest';
import { auditRecordMatches, type AuditRecordFilter } from './audit-filter.js';

const all: AuditRecordFilter = { kinds: [], channel_id: null, agent_id: null, since: null, until: null };
const record = {
  id: 'r1',
  kind: 'channel_closed',
  at: '2026-01-01T00:00:10.000Z',
  channel_id: 'c1',
  creator_id: 'alice',
  participants: ['alice', 'bob'],
};

describe('auditRecordMatches', () => {
  it('passes every record through an empty filter', () => {
    expect(auditRecordMatches(record, all)).toBe(true);
  });

  it('keeps records of one of the kinds', () => {
    expect([
      auditRecordMatches(record, { ...all, kinds: ['channel_closed', 'quarantined'] }),
      auditRecordMatches(record, { ...all, kinds: ['quarantined'] }),
    ]).toEqual([true, false]);
  });

  it('keeps records of the channel', () => {
    expect([
      auditRecordMatches(record, { ...all, channel_id: 'c1' }),
      auditRecordMatches(record, { ...all, channel_id: 'c2' }),
    ]).toEqual([true, false]);
  });

  it('keeps records that name the agent in a single field or a list', () => {
    expect(['alice', 'bob', 'carol'].map((agent) => auditRecordMatches(record, { ...all, agent_id: agent }))).toEqual([
      true,
      true,
      false,
    ]);
    const violation = { id: 'r2', kind: 'expectation_violated', at: record.at, violators: ['carol'], owner_id: 'dan' };
    expect(
      ['carol', 'dan', 'alice'].map((agent) => auditRecordMatches(violation, { ...all, agent_id: agent })),
    ).toEqual([true, true, false]);
  });

  it('keeps records from since (inclusive) until until (exclusive)', () => {
    expect([
      auditRecordMatches(record, { ...all, since: '2026-01-01T00:00:10.000Z' }),
      auditRecordMatches(record, { ...all, since: '2026-01-01T00:00:10.001Z' }),
      auditRecordMatches(record, { ...all, until: '2026-01-01T00:00:10.001Z' }),
      auditRecordMatches(record, { ...all, until: '2026-01-01T00:00:10.000Z' }),
    ]).toEqual([true, false, true, false]);
  });
});
