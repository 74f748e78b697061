import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RateLimiter, SignInLimiter, addressKey, rateKeyOf } from './rate-limit.js';
import { SessionTokens } from './session-tokens.js';

describe('rate limiter', () => {
  it('admits a burst, refuses the next, and refills at the rate per key', () => {
    const limiter = new RateLimiter({ perMinute: 60, burst: 3 });
    expect([1, 2, 3, 4].map(() => limiter.take('a', 0))).toEqual([true, true, true, false]);
    expect(limiter.take('b', 0)).toBe(true);
    expect(limiter.take('a', 999)).toBe(false);
    expect(limiter.take('a', 1000)).toBe(true);
    expect(limiter.take('a', 1000)).toBe(false);
  });

  it('takes from every key of a request or from none', () => {
    const limiter = new RateLimiter({ perMinute: 0, burst: 2 });
    expect(limiter.take(['n', 'x'], 0)).toBe(true);
    expect(limiter.take(['n', 'y'], 0)).toBe(true);
    // n is empty: y keeps the token this refusal would otherwise have cost it.
    expect(limiter.take(['n', 'y'], 0)).toBe(false);
    expect(limiter.take(['m', 'y'], 0)).toBe(true);
    expect(limiter.take(['m', 'y'], 0)).toBe(false);
  });

  it('keeps at most maxKeys buckets, dropping the one idle longest, and drops refilled ones as they age', () => {
    const limiter = new RateLimiter({ perMinute: 60, burst: 2, maxKeys: 1000 });
    for (let i = 0; i < 100_000; i++) limiter.take(`addr:${i}`, 0);
    expect(limiter.size).toBe(1000);
    // The most recent keys are the ones kept: the last one is still spent.
    expect(limiter.take('addr:99999', 0)).toBe(true);
    expect(limiter.take('addr:99999', 0)).toBe(false);
    // Two seconds later every bucket refilled (1 a second, burst 2): the next take drops them all.
    limiter.take('fresh', 2000);
    expect(limiter.size).toBe(1);
  });

  it('keeps a bucket in use however many other keys come and go', () => {
    const limiter = new RateLimiter({ perMinute: 0, burst: 3, maxKeys: 10 });
    expect(limiter.take('person:alice', 0)).toBe(true);
    for (let i = 0; i < 50; i++) {
      limiter.take(`addr:${i}`, 0);
      if (i % 5 === 0) limiter.take('person:alice', 0);
    }
    // alice took 1 + 10 times from a burst of 3: her bucket was never dropped to buy her a fresh one.
    expect(limiter.take('person:alice', 0)).toBe(false);
    expect(limiter.size).toBe(10);
  });
});

describe('rate keys', () => {
  const tokens = new SessionTokens(randomBytes(32));
  const now = 1_700_000_000;

  it('gives every token of one person one budget, and the operator one', () => {
    const alice = Array.from({ length: 10 }, (_, i) =>
      tokens.issue({ sub: 'alice', operator: false, iat: now + i, exp: now + 3600 + i }),
    );
    expect(new Set(alice).size).toBe(10);
    const keys = alice.map((t) => rateKeyOf(tokens.verify(t, now * 1000), '127.0.0.1'));
    expect(new Set(keys)).toEqual(new Set(['person:alice']));
    const operator = [0, 1].map((i) =>
      rateKeyOf(
        tokens.verify(tokens.issue({ sub: '$operator', operator: true, iat: now + i, exp: now + 60 }), now * 1000),
        '::1',
      ),
    );
    expect(operator).toEqual(['operator', 'operator']);
    expect(rateKeyOf(tokens.verify('made.up', now * 1000), '10.0.0.7')).toBe('addr:10.0.0.7');
  });

  it('ten tokens of one person draw exactly the burst from one bucket', () => {
    const limiter = new RateLimiter({ perMinute: 600, burst: 120 });
    const claims = Array.from({ length: 10 }, (_, i) =>
      tokens.verify(tokens.issue({ sub: 'alice', operator: false, iat: now + i, exp: now + 3600 }), now * 1000),
    );
    let admitted = 0;
    for (let round = 0; round < 100; round++) {
      for (const c of claims) if (limiter.take(rateKeyOf(c, '127.0.0.1'), now * 1000)) admitted++;
    }
    expect(admitted).toBe(120);
  });

  it('counts an IPv4 address as it is and an IPv6 address by its /64', () => {
    expect(addressKey('203.0.113.9')).toBe('addr:203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('addr:203.0.113.9');
    expect(addressKey('2001:db8:0:1::1')).toBe('addr:2001:db8:0:1::/64');
    expect(addressKey('2001:0db8:0000:0001:ffff:0:0:7')).toBe('addr:2001:db8:0:1::/64');
    expect(addressKey('2001:db8::1')).toBe('addr:2001:db8:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('addr:fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('addr:0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('addr:unknown');
  });
});

describe('sign-in limiter', () => {
  it('limits sign-ins per name from any address and per address for any name', () => {
    const signIns = new SignInLimiter({ perMinute: 1, burst: 3 });
    expect(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'].map((a) => signIns.take('alice', a, 0))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(['bob', 'carol', 'dave', 'erin'].map((n) => signIns.take(n, '10.0.0.9', 0))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    // 10.0.0.4 was refused for alice's name, not its own: it still has all three of its sign-ins.
    expect(['frank', 'grace', 'heidi', 'ivan'].map((n) => signIns.take(n, '10.0.0.4', 0))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    // A minute later alice's name has one sign-in again.
    expect(signIns.take('alice', '10.0.0.5', 60_000)).toBe(true);
    expect(signIns.take('alice', '10.0.0.6', 60_000)).toBe(false);
  });
});
