import type { Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { WorkflowAdapter } from './adapter.js';
import { roundRobin } from './factories.js';
import { admitAll, contextEnv, packetEnv, refold, workflowMetadata } from '../../test/workflow-helpers.js';

const adapter = new WorkflowAdapter();
const meta = workflowMetadata({
  participants: ['alice', 'bob', 'carol'],
  knobs: { graph: roundRobin(['alice', 'bob', 'carol']).toDict(), context_vars: { topic: 'pricing' } },
});

/** `envelope` addressed to `audience` only. */
function to(audience: readonly string[], envelope: Envelope): Envelope {
  return { ...envelope, audience: [...audience] };
}

function set(sender: string, vars: Record<string, unknown>, deletes: readonly string[] = []): Envelope {
  return contextEnv(sender, { set: vars, delete: [...deletes] });
}

describe('workflow state as each participant may see it', () => {
  it('shows a variable set by an envelope to bob only to alice (its sender) and bob, nobody else', () => {
    const { state } = admitAll(adapter, meta, [to(['bob'], set('alice', { secret: 'launch code' }))]);
    expect(state.context_vars).toEqual({ topic: 'pricing', secret: 'launch code' });
    expect(adapter.stateFor(state, 'bob').context_vars).toEqual({ topic: 'pricing', secret: 'launch code' });
    expect(adapter.stateFor(state, 'alice').context_vars).toEqual({ topic: 'pricing', secret: 'launch code' });
    expect(adapter.stateFor(state, 'carol').context_vars).toEqual({ topic: 'pricing' });
    expect(adapter.stateFor(state, 'mallory').context_vars).toEqual({ topic: 'pricing' });
    // The marks name who saw what: nobody's view carries them.
    for (const who of ['alice', 'bob', 'carol'])
      expect(adapter.stateFor(state, who)).not.toHaveProperty('private_context');
  });

  it('shows everyone else the value they last saw when a private envelope overwrites or deletes a variable', () => {
    const { state } = admitAll(adapter, meta, [
      to(['bob'], set('alice', { topic: 'acquisition' })),
      to(['carol'], set('bob', {}, ['topic'])),
    ]);
    expect(state.context_vars).toEqual({});
    // Only someone who read both private writes sees the current value: bob (the audience of one, sender of the other).
    expect(adapter.stateFor(state, 'bob').context_vars).toEqual({});
    expect(adapter.stateFor(state, 'carol').context_vars).toEqual({ topic: 'pricing' });
    expect(adapter.stateFor(state, 'alice').context_vars).toEqual({ topic: 'pricing' });
  });

  it('makes a variable everyone’s again once an envelope without an audience writes it', () => {
    const { state } = admitAll(adapter, meta, [
      to(['bob'], set('alice', { secret: 'launch code' })),
      set('bob', { secret: 'public now' }),
    ]);
    expect(state).not.toHaveProperty('private_context');
    expect(adapter.stateFor(state, 'carol')).toEqual(state);
  });

  it('tracks a packet’s context updates like EV_CONTEXT_SET, and keeps the turn structure for everyone', () => {
    const packet = packetEnv('alice', {
      routing: { kind: 'text' },
      context_updates: { set: { plan: 'B' }, delete: [] },
      body: 'between us',
    });
    const { state } = admitAll(adapter, meta, [to(['bob'], packet)]);
    const carol = adapter.stateFor(state, 'carol');
    expect(carol.context_vars).toEqual({ topic: 'pricing' });
    expect([carol.turn_count, carol.expected_next_speaker, carol.last_speaker_id]).toEqual([1, 'bob', 'alice']);
    expect(adapter.stateFor(state, 'bob').context_vars).toEqual({ topic: 'pricing', plan: 'B' });
  });

  it('folds the same marks on replay as live (hydrate equals admission)', () => {
    const log = [to(['bob'], set('alice', { secret: 1 })), to(['carol'], set('bob', { secret: 2, other: 3 }))];
    const { state } = admitAll(adapter, meta, log);
    expect(refold(adapter, meta, log)).toEqual(state);
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(adapter.stateFor(state, 'carol').context_vars).toEqual({ topic: 'pricing', other: 3 });
    expect(adapter.stateFor(state, 'bob').context_vars).toEqual({ topic: 'pricing', secret: 2, other: 3 });
    expect(adapter.stateFor(state, 'alice').context_vars).toEqual({ topic: 'pricing' });
  });
});
