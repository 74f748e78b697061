import { TaskState, type Part } from '@a2a-js/sdk';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_PACKET,
  EV_TEXT,
  EV_TURN_FAILED,
  createEnvelope,
  type Envelope,
} from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { openTask, parseTaskId, stepTask, taskIdOf, toA2aTask, type TaskParties } from './task-fold.js';

function partText(part: Part | undefined): string {
  return part?.content?.$case === 'text' ? part.content.value : '';
}

const parties: TaskParties = { callerId: 'alice', agentId: 'oracle', agentName: 'oracle' };
const CHANNEL = 'c1';

function envelope(sequence: number, fields: Partial<Envelope> & Pick<Envelope, 'sender_id' | 'event_type'>): Envelope {
  return createEnvelope({
    channel_id: CHANNEL,
    envelope_id: `e${sequence}`,
    created_at: `2026-01-01T00:00:0${sequence}.000Z`,
    sequence,
    ...fields,
  });
}

const request = envelope(3, {
  sender_id: 'alice',
  event_type: EV_TEXT,
  event_data: { text: 'Capital?', a2a_message_id: 'm-1' },
});

function fold(...after: Envelope[]) {
  return after.reduce((view, e) => stepTask(view, e, parties), openTask(CHANNEL, request));
}

describe('a2a task ids', () => {
  it('joins the channel and the sequence with a dot and reads them back; anything else is no task', () => {
    expect(taskIdOf('01ABC', 7)).toBe('01ABC.7');
    expect(parseTaskId('01ABC.7')).toEqual({ channelId: '01ABC', sequence: 7 });
    for (const bad of ['01ABC', '.7', '01ABC.0', '01ABC.x', 'a b.1', '01ABC.07', `${'x'.repeat(129)}.1`]) {
      expect(parseTaskId(bad)).toBeNull();
    }
  });
});

describe('a2a task fold', () => {
  it('is working until the agent answers the request, then completed with the answer', () => {
    expect(fold().state).toBe(TaskState.TASK_STATE_WORKING);
    const other = envelope(4, {
      sender_id: 'oracle',
      event_type: EV_TEXT,
      event_data: { text: 'old' },
      causation_id: 'e1',
    });
    expect(fold(other).state).toBe(TaskState.TASK_STATE_WORKING);
    const answer = envelope(5, {
      sender_id: 'oracle',
      event_type: EV_TEXT,
      event_data: { text: 'Paris.' },
      causation_id: 'e3',
    });
    const view = fold(other, answer);
    expect([view.state, view.answer?.sequence]).toEqual([TaskState.TASK_STATE_COMPLETED, 5]);
    const task = toA2aTask(view);
    expect(task.id).toBe('c1.3');
    expect(task.history.map((m) => [m.messageId, partText(m.parts[0])])).toEqual([
      ['m-1', 'Capital?'],
      ['e5', 'Paris.'],
    ]);
    expect(task.artifacts.map((a) => partText(a.parts[0]))).toEqual(['Paris.']);
    expect(task.status?.timestamp).toBe('2026-01-01T00:00:05.000Z');
    expect(toA2aTask(view, 1).history.map((m) => m.messageId)).toEqual(['e5']);
    expect(toA2aTask(view, 0).history).toEqual([]);
  });

  it('is input-required when the agent hands the turn back to the caller with a packet', () => {
    const handoff = envelope(4, {
      sender_id: 'oracle',
      event_type: EV_PACKET,
      event_data: { body: 'Which France?', routing: { kind: 'handoff', target: 'alice' } },
      causation_id: 'e3',
    });
    expect(fold(handoff).state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it("fails on the agent's failed turn, and on a channel end the caller did not ask for", () => {
    const failed = envelope(4, {
      sender_id: 'oracle',
      event_type: EV_TURN_FAILED,
      event_data: { agent_name: 'oracle', reason: 'the model rejected the API key', code: 'model_auth' },
      causation_id: 'e3',
    });
    expect([fold(failed).state, fold(failed).reason]).toEqual([
      TaskState.TASK_STATE_FAILED,
      'the model rejected the API key',
    ]);
    const expired = envelope(4, {
      sender_id: 'alice',
      event_type: EV_CHANNEL_EXPIRED,
      event_data: { reason: 'ttl_expired', channel_id: CHANNEL },
    });
    expect([fold(expired).state, fold(expired).reason]).toEqual([TaskState.TASK_STATE_FAILED, 'ttl_expired']);
  });

  it('is canceled when the caller closed the channel before the answer, and stays settled after', () => {
    const closed = envelope(4, {
      sender_id: 'alice',
      event_type: EV_CHANNEL_CLOSED,
      event_data: { reason: 'canceled', channel_id: CHANNEL },
    });
    const late = envelope(5, {
      sender_id: 'oracle',
      event_type: EV_TEXT,
      event_data: { text: 'Paris.' },
      causation_id: 'e3',
    });
    const view = fold(closed, late);
    expect([view.state, view.answer, partText(toA2aTask(view).status?.message?.parts[0])]).toEqual([
      TaskState.TASK_STATE_CANCELED,
      null,
      'canceled',
    ]);
  });
});
