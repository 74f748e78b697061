import { describe, expect, it } from 'vitest';
import { violationRecordOf } from '@ag2net/protocol/internal';
import {
  AuditKind,
  CloseReason,
  EV_EXPECTATION_VIOLATED,
  EV_TEXT,
  ViolationHandlerName,
  createEnvelope,
  expectationViolatedReason,
} from '@ag2net/protocol';

const AG2_FIELDS = { expectation: 'reply_within', violators: ['bob'], detail: { seconds: 30 } };

function violated(eventData: Record<string, unknown>, eventType: string = EV_EXPECTATION_VIOLATED) {
  return createEnvelope({ channel_id: 'c1', sender_id: 'hub', event_type: eventType, event_data: eventData });
}

describe('violation records', () => {
  it('reads the record of a hub-written violation, with params and scope defaulted', () => {
    const record = violationRecordOf(violated({ ...AG2_FIELDS, on_violation: 'auto_close', expectation_index: 1 }));
    expect(record).toEqual({ ...AG2_FIELDS, on_violation: 'auto_close', params: {}, expectation_index: 1, scope: '' });
  });

  it('keeps unknown fields of a record', () => {
    const record = violationRecordOf(
      violated({ ...AG2_FIELDS, on_violation: 'hide', expectation_index: 0, scope: 'turn:4', note: 'x' }),
    );
    expect(record).toEqual({
      ...AG2_FIELDS,
      on_violation: 'hide',
      params: {},
      expectation_index: 0,
      scope: 'turn:4',
      note: 'x',
    });
  });

  it('finds no record in an AG2-only violation or in another event type', () => {
    expect(violationRecordOf(violated(AG2_FIELDS))).toBeNull();
    expect(violationRecordOf(violated({ ...AG2_FIELDS, on_violation: 'audit', expectation_index: 0 }, EV_TEXT))).toBe(
      null,
    );
  });
});

describe('wire vocabulary', () => {
  it('names the five built-in violation handlers as manifests write them', () => {
    expect(Object.values(ViolationHandlerName)).toEqual(['audit', 'notify_channel', 'warn', 'auto_close', 'hide']);
  });

  it('writes the auto_close reason as expectation_violated:<name>', () => {
    expect(expectationViolatedReason('reply_within')).toBe('expectation_violated:reply_within');
  });

  it('spells every close reason and audit kind in snake case, each once', () => {
    for (const values of [Object.values(CloseReason), Object.values(AuditKind)]) {
      expect(values.filter((v) => !/^[a-z]+(_[a-z]+)*$/.test(v))).toEqual([]);
      expect(new Set(values).size).toBe(values.length);
    }
  });
});
