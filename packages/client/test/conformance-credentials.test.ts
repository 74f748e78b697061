import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CredentialsError,
  agentIdOf,
  expiresAtOf,
  formatCreds,
  inboxPrefixOf,
  parseCreds,
  publicKeyOf,
} from '../src/credentials.js';

// conformance/fixtures/credentials.json: what every client reads from its credentials (reply-inbox prefix, agent id
// and expiry of a user JWT, the JWT and seed of a `.creds` file, the public key of a seed). The Python client checks
// the same file (clients/python/tests/test_credentials.py).
const FIXTURE = fileURLToPath(new URL('../../../conformance/fixtures/credentials.json', import.meta.url));

const CredentialsFixture = z.object({
  jwts: z.array(
    z.object({
      jwt: z.string(),
      inbox_prefix: z.string(),
      agent_id: z.string().nullable(),
      expires_at: z.number().nullable(),
    }),
  ),
  invalid_jwts: z.array(z.string()),
  keys: z.array(z.object({ seed: z.string(), public_key: z.string() })),
  creds_files: z.array(z.object({ text: z.string(), jwt: z.string(), seed: z.string() })),
  invalid_creds_files: z.array(z.string()),
});

const fixture = CredentialsFixture.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

describe('credentials conformance', () => {
  it('reads the inbox prefix, the agent id and the expiry (seconds) of each JWT', () => {
    expect(fixture.jwts).toHaveLength(6);
    for (const c of fixture.jwts) {
      const expiresAtMs = expiresAtOf(c.jwt);
      expect([inboxPrefixOf(c.jwt), agentIdOf(c.jwt), expiresAtMs === null ? null : expiresAtMs / 1000]).toEqual([
        c.inbox_prefix,
        c.agent_id,
        c.expires_at,
      ]);
    }
    for (const jwt of fixture.invalid_jwts) expect(() => inboxPrefixOf(jwt)).toThrow(CredentialsError);
  });

  it('parses .creds files, writes the first one byte for byte, and derives each seed’s public key', () => {
    for (const c of fixture.creds_files) expect(parseCreds(c.text)).toEqual({ jwt: c.jwt, seed: c.seed });
    for (const text of fixture.invalid_creds_files) expect(() => parseCreds(text)).toThrow(CredentialsError);
    const first = fixture.creds_files[0];
    expect(first === undefined ? null : formatCreds(first)).toBe(first?.text);
    for (const k of fixture.keys) expect(publicKeyOf(k.seed)).toBe(k.public_key);
  });
});
