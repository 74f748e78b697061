import { hubNames } from '@ag2net/protocol';
import { decode, type User } from '@nats-io/jwt';
import { createAccount } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import {
  IssuanceError,
  MAX_IDENTITY_TTL_SECONDS,
  credsFile,
  issueIdentityCredentials,
  parseCredsFile,
} from './issue.js';
import { createIdentityKeys, pairOf } from './keys.js';
import { identityPermissions } from './permissions.js';

const names = hubNames('acme');
const account = pairOf(createAccount());
const signing = pairOf(createAccount());
const NOW = Date.parse('2026-01-01T00:00:00Z');

const issue = (ttlSeconds?: number, agentId = 'alice') =>
  issueIdentityCredentials({
    accountPublicKey: account.publicKey,
    accountSigningSeed: signing.seed,
    identityPublicKey: keys.publicKey,
    agentId,
    names,
    nowMs: NOW,
    ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
  });
const keys = createIdentityKeys();

describe('issueIdentityCredentials', () => {
  it('signs a JWT for the identity key with the signing key, its permissions and a bounded lifetime', async () => {
    const issued = await issue(600);
    const claims = decode<User>(issued.jwt);
    expect(claims.sub).toBe(keys.publicKey);
    expect(claims.iss).toBe(signing.publicKey);
    expect(claims.name).toBe('alice');
    expect(claims.exp).toBe(NOW / 1000 + 600);
    expect(issued.expiresAt).toBe(NOW / 1000 + 600);
    expect(claims.nats.issuer_account).toBe(account.publicKey);
    const p = identityPermissions(names, 'alice');
    expect(claims.nats.pub).toEqual({ allow: p.pub.allow, deny: [] });
    expect(claims.nats.sub).toEqual({ allow: p.sub.allow, deny: [] });
    expect(claims.nats.pub?.allow?.slice(0, 2)).toEqual(['acme.hub.v1.*.alice', 'acme.hub.v1.*.*.alice']);
  });

  it('defaults to one hour', async () => {
    expect((await issue()).expiresAt).toBe(NOW / 1000 + 3_600);
  });

  it('refuses an unbounded or malformed lifetime, a bad id and a bad key', async () => {
    await expect(issue(0)).rejects.toThrow(IssuanceError);
    await expect(issue(MAX_IDENTITY_TTL_SECONDS + 1)).rejects.toThrow(IssuanceError);
    await expect(issue(1.5)).rejects.toThrow(IssuanceError);
    await expect(issue(60, 'a.*')).rejects.toThrow(IssuanceError);
    await expect(
      issueIdentityCredentials({
        accountPublicKey: account.publicKey,
        accountSigningSeed: signing.seed,
        identityPublicKey: account.publicKey,
        agentId: 'alice',
        names,
      }),
    ).rejects.toThrow('not a user public key');
  });
});

describe('credsFile', () => {
  it('formats a standard .creds file that parses back to the JWT and seed', async () => {
    const { jwt } = await issue(60);
    const text = credsFile(jwt, keys.seed);
    expect(text).toContain('-----BEGIN NATS USER JWT-----');
    expect(parseCredsFile(text)).toEqual({ jwt, seed: keys.seed });
  });

  it('refuses what is not a .creds file', () => {
    expect(() => parseCredsFile('hello')).toThrow(IssuanceError);
  });
});
