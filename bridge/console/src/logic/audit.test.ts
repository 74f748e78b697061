import { describe, expect, it } from 'vitest';
import { auditAgents, auditSummary } from './audit.js';

const names: Record<string, string> = { s1: 'slow', a1: 'ann', f1: 'flaky' };
const nameOf = (id: string): string => names[id] ?? id;

describe('auditAgents', () => {
  it('names the agent, else the violators, else the creator or owner', () => {
    expect(auditAgents({ agent_id: 'a1', violators: ['s1'] }, nameOf)).toBe('ann');
    expect(auditAgents({ violators: ['s1', 'f1'] }, nameOf)).toBe('slow, flaky');
    expect(auditAgents({ creator_id: 'a1', participants: ['a1', 's1'] }, nameOf)).toBe('ann');
    expect(auditAgents({ owner_id: 'f1' }, nameOf)).toBe('flaky');
    expect(auditAgents({ channel_id: 'c1', reason: 'resolved' }, nameOf)).toBe('');
  });
});

describe('auditSummary', () => {
  it('says which expectation who violated, and what the hub did', () => {
    const record = {
      kind: 'expectation_violated',
      channel_id: 'c1',
      expectation: 'turn_within',
      on_violation: 'warn',
      params: { seconds: 1 },
      violators: ['s1'],
      detail: {},
    };
    expect(auditSummary(record, nameOf)).toBe('turn_within violated by slow → warn');
    expect(auditSummary({ kind: 'expectation_violated', violators: [] }, nameOf)).toBe('an expectation violated');
  });
  it('says who opened a channel with whom', () => {
    expect(
      auditSummary(
        { kind: 'channel_created', manifest_type: 'discussion', creator_id: 'a1', participants: ['a1', 's1', 'f1'] },
        nameOf,
      ),
    ).toBe('discussion opened by ann with ann, slow, flaky');
  });
  it("gives a channel's end its reason", () => {
    expect(auditSummary({ kind: 'channel_closed', reason: 'resolved' }, nameOf)).toBe('resolved');
    expect(auditSummary({ kind: 'channel_expired', reason: '' }, nameOf)).toBe('no reason given');
  });
  it('falls back to the reason, the error, then the first plain fields', () => {
    expect(auditSummary({ kind: 'turn_failed', reason: 'model timed out' }, nameOf)).toBe('model timed out');
    expect(
      auditSummary(
        { kind: 'turn_failed', envelope_id: 'E1', exc_type: 'ModelCallError', exc_message: 'the key was refused' },
        nameOf,
      ),
    ).toBe('ModelCallError: the key was refused');
    expect(auditSummary({ kind: 'agent_registered', agent_id: 'a1', name: 'ann' }, nameOf)).toBe('registered ann');
    expect(auditSummary({ kind: 'task_event', error: 'mirror failed' }, nameOf)).toBe('mirror failed');
    expect(
      auditSummary(
        { kind: 'task_terminated', id: 'x', at: 't', task_id: 'T1', state: 'completed', detail: {}, n: 2, z: 'no' },
        nameOf,
      ),
    ).toBe('task_id T1 · state completed · n 2');
  });
});
