import { describe, expect, it } from 'vitest';
import { silentLogger } from './logger.js';
import { renewalDelayMs, runRenewal } from './renewal.js';

describe('credential renewal', () => {
  it('renews at two thirds of the lifetime, at once when that is past', () => {
    const lifetime = { issuedAtMs: 0, expiresAtMs: 3_000 };
    expect([0, 1_500, 2_000, 2_900].map((now) => renewalDelayMs(now, lifetime))).toEqual([2_000, 500, 0, 0]);
  });

  it('renews each new lifetime in turn and stops when aborted', async () => {
    const stop = new AbortController();
    let now = 0;
    const renewedAt: number[] = [];
    await runRenewal({
      lifetime: { issuedAtMs: -3, expiresAtMs: 0 },
      signal: stop.signal,
      logger: silentLogger,
      agent: 'bob',
      agentId: 'id',
      now: () => now,
      renew: () => {
        renewedAt.push(now);
        if (renewedAt.length === 3) stop.abort();
        now += 1;
        return Promise.resolve({ expiresAtMs: now });
      },
    });
    expect(renewedAt).toEqual([0, 1, 2]);
  });

  it('gives up once the credentials expired while every renewal failed, and logs it by agent name', async () => {
    let now = 0;
    const errors: object[] = [];
    await runRenewal({
      lifetime: { issuedAtMs: -10, expiresAtMs: 1 },
      signal: new AbortController().signal,
      logger: { ...silentLogger, error: (obj) => void errors.push(obj) },
      agent: 'bob',
      agentId: 'id',
      now: () => now,
      renew: () => {
        now += 1;
        return Promise.reject(new Error('hub down'));
      },
    });
    expect(errors.map((e) => Object.entries(e).filter(([k]) => k === 'agent' || k === 'attempts'))).toEqual([
      [
        ['agent', 'bob'],
        ['attempts', 1],
      ],
    ]);
  });
});
