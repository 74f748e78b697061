import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CredentialsError,
  agentIdOf,
  createIdentityKeys,
  expiresAtOf,
  inboxPrefixOf,
  loadCreds,
  parseCreds,
  publicKeyOf,
  readCredsFile,
  writeCredsFile,
} from './credentials.js';

/** An unsigned JWT with `claims` as its payload: the client reads claims without checking signatures. */
function jwtWith(claims: object): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ typ: 'JWT', alg: 'ed25519-nkey' })}.${part(claims)}.c2ln`;
}

const ID = '01JAAAAAAAAAAAAAAAAAAAAAAA';

describe('credentials', () => {
  it('takes the reply-inbox prefix from the JWT’s subscribe permission', () => {
    const identity = jwtWith({ sub: 'U1', nats: { sub: { allow: [`_INBOX_${ID}.>`] } } });
    const registrant = jwtWith({ sub: 'U1', nats: { sub: { allow: ['_REGISTRANT_INBOX_ag2.>'] } } });
    const hubService = jwtWith({ sub: 'U1', nats: { sub: { allow: ['ag2.hub.v1.>', '_HUB_INBOX_ag2.>'] } } });
    const anywhere = jwtWith({ sub: 'U1', nats: { sub: { allow: ['>'] } } });
    const unrestricted = jwtWith({ sub: 'U1', nats: {} });
    expect([identity, registrant, hubService, anywhere, unrestricted].map(inboxPrefixOf)).toEqual([
      `_INBOX_${ID}`,
      '_REGISTRANT_INBOX_ag2',
      '_HUB_INBOX_ag2',
      '_INBOX',
      '_INBOX',
    ]);
  });

  it('reads the agent id and the expiry of an identity JWT', () => {
    const jwt = jwtWith({ sub: 'U1', name: ID, exp: 1_900_000_000 });
    expect([agentIdOf(jwt), expiresAtOf(jwt)]).toEqual([ID, 1_900_000_000_000]);
    expect([agentIdOf(jwtWith({ sub: 'U1', name: 'not an id' })), expiresAtOf(jwtWith({ sub: 'U1' }))]).toEqual([
      null,
      null,
    ]);
    expect(() => inboxPrefixOf('not-a-jwt')).toThrow(CredentialsError);
  });

  it('writes a .creds file readable by its owner only, and reads it back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ag2net-creds-unit-'));
    try {
      const keys = createIdentityKeys();
      const path = join(dir, 'a.creds');
      const jwt = jwtWith({ sub: keys.publicKey });
      expect(await readCredsFile(path)).toBeNull();
      await writeCredsFile(path, { jwt, seed: keys.seed });
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(await readCredsFile(path)).toEqual({ jwt, seed: keys.seed });
      expect(await loadCreds(path)).toEqual({ jwt, seed: keys.seed });
      expect(parseCreds(await readFile(path, 'utf8'))).toEqual({ jwt, seed: keys.seed });
      expect([publicKeyOf(keys.seed), keys.publicKey.startsWith('U'), keys.seed.startsWith('SU')]).toEqual([
        keys.publicKey,
        true,
        true,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses text that is not a .creds file', async () => {
    expect(() => parseCreds('hello')).toThrow(CredentialsError);
    await expect(loadCreds('/nonexistent/ag2net.creds')).rejects.toThrow(CredentialsError);
  });
});
