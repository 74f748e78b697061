import { ProtocolError, UnavailableError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { MAX_TURN_RETRY_DELAY_MS, TurnAttempts, isTransientTurnFailure } from './turn-retries.js';

describe('isTransientTurnFailure', () => {
  it('retries unavailable and unknown failures, and an error declaring retryable; not a hub refusal', () => {
    const declared = (retryable: boolean) => Object.assign(new Error('declared'), { retryable });
    expect(
      [
        new UnavailableError('not the active hub'),
        new Error('model down'),
        'a string',
        declared(true),
        new ProtocolError("channel 'c1' is closed"),
        declared(false),
      ].map(isTransientTurnFailure),
    ).toEqual([true, true, true, true, false, false]);
  });
});

describe('TurnAttempts', () => {
  it('doubles the delay on every failed attempt and gives up at the bound', () => {
    const attempts = new TurnAttempts(5, 1000);
    expect(['e', 'e', 'e', 'e', 'e'].map((id) => attempts.fail(id))).toEqual([
      { attempts: 1, retryInMs: 1000 },
      { attempts: 2, retryInMs: 2000 },
      { attempts: 3, retryInMs: 4000 },
      { attempts: 4, retryInMs: 8000 },
      { attempts: 5, retryInMs: null },
    ]);
    expect(attempts.count('e')).toBe(0);
  });

  it('gives up at once on a final failure, counting the attempts before it, and forgets the count', () => {
    const attempts = new TurnAttempts(5, 1000);
    expect([attempts.fail('f', { final: true }), attempts.fail('e'), attempts.fail('e', { final: true })]).toEqual([
      { attempts: 1, retryInMs: null },
      { attempts: 1, retryInMs: 1000 },
      { attempts: 2, retryInMs: null },
    ]);
    expect([attempts.count('f'), attempts.count('e')]).toEqual([0, 0]);
  });

  it('caps the delay, forgets a settled delivery and keeps at most `capacity` counts', () => {
    const attempts = new TurnAttempts(100, 40_000, 2);
    attempts.fail('a');
    expect(attempts.fail('a')).toEqual({ attempts: 2, retryInMs: MAX_TURN_RETRY_DELAY_MS });
    attempts.settled('a');
    expect(attempts.count('a')).toBe(0);
    for (const id of ['x', 'y', 'z']) attempts.fail(id);
    expect(['x', 'y', 'z'].map((id) => attempts.count(id))).toEqual([0, 1, 1]);
  });
});
