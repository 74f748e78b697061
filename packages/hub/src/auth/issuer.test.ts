import { createIdentityKeys, identityPermissions } from '@ag2net/auth';
import { hubNames } from '@ag2net/protocol';
import { decode, type User } from '@nats-io/jwt';
import { createAccount, createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { createCredentialsIssuer } from './issuer.js';

const names = hubNames('acme');
const account = createAccount();
const signing = createAccount();
const options = {
  accountPublicKey: account.getPublicKey(),
  signingSeed: new TextDecoder().decode(signing.getSeed()),
};

describe('createCredentialsIssuer', () => {
  it('issues a JWT for the key with the identity’s permissions, its expiry and its reply prefix', async () => {
    const keys = createIdentityKeys();
    const {
      credentials: issued,
      issuedAt,
      expiresAt,
    } = await createCredentialsIssuer({ ...options, ttlSeconds: 120 }, names).issue('alice-1', keys.publicKey);
    const claims = decode<User>(issued.jwt);
    expect([issuedAt, expiresAt]).toEqual([claims.iat, claims.exp]);
    expect(claims.sub).toBe(keys.publicKey);
    expect(claims.iss).toBe(signing.getPublicKey());
    expect(claims.nats.issuer_account).toBe(account.getPublicKey());
    expect(claims.nats.pub?.allow).toEqual(identityPermissions(names, 'alice-1').pub.allow);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(120);
    expect(issued.expires_at).toBe(new Date((claims.exp ?? 0) * 1000).toISOString());
    expect(issued.inbox_prefix).toBe('_INBOX_alice-1');
  });

  it('defaults to one hour', async () => {
    const issued = await createCredentialsIssuer(options, names).issue('alice-1', createIdentityKeys().publicKey);
    const claims = decode<User>(issued.credentials.jwt);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3_600);
  });

  it('dates a JWT no earlier than it is told, so that one issued after a revocation of its key is honoured', async () => {
    const later = Math.floor(Date.now() / 1000) + 1;
    const issued = await createCredentialsIssuer(options, names).issue(
      'alice-1',
      createIdentityKeys().publicKey,
      later,
    );
    const claims = decode<User>(issued.credentials.jwt);
    expect(claims.iat).toBe(later);
    expect(issued.issuedAt).toBe(later);
  });

  it('refuses malformed options when the hub starts, not at the first registration', () => {
    const userSeed = new TextDecoder().decode(createUser().getSeed());
    expect(() =>
      createCredentialsIssuer({ ...options, accountPublicKey: signing.getPublicKey().slice(1) }, names),
    ).toThrow('credentials.accountPublicKey is not an account public key (A…)');
    expect(() => createCredentialsIssuer({ ...options, signingSeed: 'SAnope' }, names)).toThrow(
      'credentials.signingSeed is not an nkey seed',
    );
    expect(() => createCredentialsIssuer({ ...options, signingSeed: userSeed }, names)).toThrow(
      'credentials.signingSeed is not an account seed (SA…)',
    );
    for (const ttlSeconds of [0, 1.5, 86_401]) {
      expect(() => createCredentialsIssuer({ ...options, ttlSeconds }, names)).toThrow(
        `credentials.ttlSeconds must be an integer in 1..86400, got ${ttlSeconds}`,
      );
    }
  });
});
