import { describe, expect, it } from 'vitest';
import {
  TERMINAL_TASK_STATES,
  TaskMetadataSchema,
  TaskSpecSchema,
  TaskState,
  isTerminalTaskState,
} from '@ag2net/protocol';

describe('TaskState', () => {
  it('has the six task states, cancelled among them', () => {
    expect(Object.values(TaskState)).toEqual(['created', 'running', 'completed', 'failed', 'expired', 'cancelled']);
  });

  it('counts completed, failed, expired and cancelled as terminal', () => {
    expect(TERMINAL_TASK_STATES).toEqual(['completed', 'failed', 'expired', 'cancelled']);
    expect(Object.values(TaskState).filter(isTerminalTaskState)).toEqual(TERMINAL_TASK_STATES);
  });
});

describe('TaskMetadata', () => {
  it('fills defaults: created, empty spec, no timestamps, no result', () => {
    const task = TaskMetadataSchema.parse({ task_id: 't1', owner_id: 'bob', created_at: '2026-05-09T12:00:00Z' });
    expect(task).toStrictEqual({
      task_id: 't1',
      owner_id: 'bob',
      spec: { title: '', objective: '', capability: null, inputs: {} },
      state: 'created',
      created_at: '2026-05-09T12:00:00Z',
      started_at: null,
      completed_at: null,
      expires_at: null,
      last_progress_at: null,
      channel_id: null,
      progress: {},
      error: null,
    });
  });

  it('carries any JSON result', () => {
    const task = TaskMetadataSchema.parse({
      task_id: 't1',
      owner_id: 'bob',
      created_at: '2026-05-09T12:00:00Z',
      state: 'completed',
      result: ['ok', 1],
    });
    expect(task.result).toEqual(['ok', 1]);
  });

  it('rejects an unknown state, a missing owner and unknown keys', () => {
    const base = { task_id: 't1', owner_id: 'bob', created_at: '2026-05-09T12:00:00Z' };
    expect(TaskMetadataSchema.safeParse({ ...base, state: 'done' }).success).toBe(false);
    expect(TaskMetadataSchema.safeParse({ task_id: 't1', created_at: base.created_at }).success).toBe(false);
    expect(TaskMetadataSchema.safeParse({ ...base, priority: 1 }).success).toBe(false);
  });
});

describe('TaskSpec', () => {
  it('keeps keys it does not know', () => {
    expect(TaskSpecSchema.parse({ title: 'Review', deadline: 'friday' })).toStrictEqual({
      title: 'Review',
      objective: '',
      capability: null,
      inputs: {},
      deadline: 'friday',
    });
  });
});
