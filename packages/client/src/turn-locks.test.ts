import type { HubOp } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import type { HubCallOptions } from './rpc.js';
import { TURN_LOCK_TTL_MS, TurnLocks } from './turn-locks.js';

/** A hub that records every call and answers from `answers` (by op). */
function recordingHub(answers: Partial<Record<HubOp, unknown>>): {
  calls: { op: HubOp; request: unknown; options: HubCallOptions | undefined }[];
  hub: ConstructorParameters<typeof TurnLocks>[0]['hub'];
} {
  const calls: { op: HubOp; request: unknown; options: HubCallOptions | undefined }[] = [];
  const hub: ConstructorParameters<typeof TurnLocks>[0]['hub'] = {
    call: (op, request, options) => {
      calls.push({ op, request, options });
      // The fake answers what the test put in for this op; the tests read only the fields they set.
      return Promise.resolve(answers[op] as never);
    },
  };
  return { calls, hub };
}

describe('TurnLocks', () => {
  it('takes, renews and releases the lock through the hub, as the agent, for this replica', async () => {
    const { calls, hub } = recordingHub({
      acquireTurnLock: { acquired: true },
      renewTurnLock: { renewed: false },
      releaseTurnLock: {},
    });
    const locks = new TurnLocks({ hub, agentId: 'agent-1', holder: 'replica-a', ttlMs: 3000 });
    const stop = new AbortController();

    expect(await locks.acquire('c1')).toBe(true);
    expect(await locks.renew('c1', { signal: stop.signal })).toBe(false);
    await locks.release('c1');

    expect(calls).toEqual([
      {
        op: 'acquireTurnLock',
        request: { channel_id: 'c1', holder: 'replica-a', ttl_ms: 3000 },
        options: { caller: 'agent-1', timeout: 1000 },
      },
      {
        op: 'renewTurnLock',
        request: { channel_id: 'c1', holder: 'replica-a' },
        options: { caller: 'agent-1', timeout: 1000, signal: stop.signal },
      },
      {
        op: 'releaseTurnLock',
        request: { channel_id: 'c1', holder: 'replica-a' },
        options: { caller: 'agent-1', timeout: 1000 },
      },
    ]);
  });

  it('defaults to a 6 s TTL and a fresh holder id per replica', async () => {
    const { calls, hub } = recordingHub({ acquireTurnLock: { acquired: false } });
    const a = new TurnLocks({ hub, agentId: 'agent-1' });
    const b = new TurnLocks({ hub, agentId: 'agent-1' });

    expect(await a.acquire('c1')).toBe(false);
    expect([a.ttlMs, TURN_LOCK_TTL_MS, a.holder === b.holder]).toEqual([6000, 6000, false]);
    expect(calls).toEqual([
      {
        op: 'acquireTurnLock',
        request: { channel_id: 'c1', holder: a.holder, ttl_ms: 6000 },
        options: { caller: 'agent-1', timeout: 2000 },
      },
    ]);
  });
});
