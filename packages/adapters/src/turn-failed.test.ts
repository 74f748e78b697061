import { ChannelState, EV_TURN_FAILED } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelFor, event, foldAll, text } from '../test/helpers.js';
import { workflowMetadata } from '../test/workflow-helpers.js';
import { ConsultingAdapter } from './consulting.js';
import { ConversationAdapter, type ConversationState } from './conversation.js';
import { DiscussionAdapter } from './discussion.js';
import { NO_TRANSITION, type ChannelAdapter } from './types.js';
import { WorkflowAdapter } from './workflow/adapter.js';
import { sequence } from './workflow/factories.js';

const failure = { agent_name: 'bob', reason: 'the model rejected the API key', code: 'model_auth' };
const closing = { nextState: ChannelState.Closing, autoCloseReason: 'turn_failed' };

describe('ag2.turn.failed', () => {
  it('closes a consulting channel with turn_failed when the respondent could not answer', () => {
    const adapter = new ConsultingAdapter();
    const meta = channelFor(adapter, { creator: 'alice', others: ['bob'] });
    const log = [text('alice', 'What is a log?', 'q1')];
    const notice = event('bob', EV_TURN_FAILED, 'f1', failure);
    adapter.validateSend(meta, notice, foldAll(adapter, meta, log));
    const state = foldAll(adapter, meta, [...log, notice]);
    expect(state).toEqual(foldAll(adapter, meta, log));
    expect(adapter.onAccepted(meta, notice, state)).toEqual(closing);
  });

  it('leaves a consulting channel open for a failure notice from someone whose turn it is not', () => {
    const adapter = new ConsultingAdapter();
    const meta = channelFor(adapter, { creator: 'alice', others: ['bob'] });
    const notice = event('bob', EV_TURN_FAILED, 'f1', failure);
    expect(adapter.onAccepted(meta, notice, foldAll(adapter, meta, []))).toEqual(NO_TRANSITION);
  });

  it('closes a discussion with turn_failed when the expected speaker failed, and not for another', () => {
    const adapter = new DiscussionAdapter();
    const meta = channelFor(adapter, { creator: 'alice', others: ['bob', 'carol'] });
    const state = foldAll(adapter, meta, [text('alice', 'Ship on Friday?', 'e1')]);
    expect(adapter.onAccepted(meta, event('bob', EV_TURN_FAILED, 'f1', failure), state)).toEqual(closing);
    expect(adapter.onAccepted(meta, event('carol', EV_TURN_FAILED, 'f2', failure), state)).toEqual(NO_TRANSITION);
  });

  it('ends a workflow with turn_failed when the current speaker failed', () => {
    const adapter = new WorkflowAdapter();
    const meta = workflowMetadata({
      participants: ['alice', 'bob'],
      knobs: { graph: sequence(['alice', 'bob']).toDict() },
    });
    const state = foldAll(adapter, meta, [text('alice', 'Research this.', 'e1')]);
    expect(adapter.expectedNext(meta, state)?.agentId).toBe('bob');
    expect(adapter.onAccepted(meta, event('bob', EV_TURN_FAILED, 'f1', failure), state)).toEqual(closing);
  });

  it('keeps a conversation open: either side may speak again', () => {
    const adapter: ChannelAdapter<ConversationState> = new ConversationAdapter();
    const meta = channelFor(adapter, { creator: 'alice', others: ['bob'] });
    const state = foldAll(adapter, meta, [text('alice', 'Hi', 'e1')]);
    expect(adapter.onAccepted(meta, event('bob', EV_TURN_FAILED, 'f1', failure), state)).toEqual(NO_TRANSITION);
  });
});
