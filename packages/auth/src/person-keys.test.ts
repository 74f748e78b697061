import { fromSeed } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { keysFromSeed } from './keys.js';
import { personSeed } from './person-keys.js';

const secret = new TextEncoder().encode('a-bridge-secret-of-some-length');

describe('person keys', () => {
  it('derives the same valid user seed for the same secret and name, another for another name or secret', () => {
    const seed = personSeed(secret, 'alice');
    expect(seed).toMatch(/^SU[A-Z2-7]{56}$/);
    expect(personSeed(secret, 'alice')).toBe(seed);
    expect(personSeed(secret, 'bob')).not.toBe(seed);
    expect(personSeed(new TextEncoder().encode('another secret'), 'alice')).not.toBe(seed);
    // nkeys checks the prefix and the CRC when it reads a seed.
    const kp = fromSeed(new TextEncoder().encode(seed));
    expect(kp.getPublicKey()).toBe(keysFromSeed(seed).publicKey);
    expect(kp.getPublicKey()).toMatch(/^U[A-Z2-7]{55}$/);
  });

  it('derives the key every deployment derived before for a secret and a name', () => {
    // Pinned: a change of the derivation (salt, info, encoding) would give every person another identity.
    expect(personSeed(new Uint8Array(32).fill(7), 'you')).toBe(
      'SUAOGB7ON2UE2SJRMB4CNXEKHA3XADZUQAJAKEBVGXURXD2DUU3SWWE2VI',
    );
  });
});
