import { fromSeed } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { personSeed, publicKeyOfSeed } from './person-keys.js';
import { SessionTokens } from './session-tokens.js';

const secret = new TextEncoder().encode('a-bridge-secret-of-some-length');

describe('person keys', () => {
  it('name the public key of a derived seed as nkeys reads it', () => {
    const seed = personSeed(secret, 'alice');
    expect(publicKeyOfSeed(seed)).toBe(fromSeed(new TextEncoder().encode(seed)).getPublicKey());
    expect(publicKeyOfSeed(seed)).not.toBe(publicKeyOfSeed(personSeed(secret, 'bob')));
  });
});

describe('session tokens', () => {
  const tokens = new SessionTokens(secret);
  const claims = { sub: 'alice', operator: false, iat: 1000, exp: 2000 };

  it('accepts its own token until it expires', () => {
    const token = tokens.issue(claims);
    expect(tokens.verify(token, 1_999_000)).toEqual({ v: 1, ...claims });
    expect(tokens.verify(token, 2_000_000)).toBeNull();
  });

  it('refuses a token of another secret, a changed claim and garbage', () => {
    const token = tokens.issue(claims);
    expect(new SessionTokens(new TextEncoder().encode('other')).verify(token, 1_500_000)).toBeNull();
    const [, mac] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ v: 1, ...claims, operator: true })).toString('base64url')}.${mac ?? ''}`;
    expect(tokens.verify(forged, 1_500_000)).toBeNull();
    expect(tokens.verify('nope', 1_500_000)).toBeNull();
    expect(tokens.verify(`${token}.x`, 1_500_000)).toBeNull();
  });
});
