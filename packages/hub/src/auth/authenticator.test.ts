import { AuthError, AuthBlockSchema } from '@ag2net/protocol';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { apiKeyAuthenticator, noAdmission, openRegistration, storedAuth } from './authenticator.js';

const block = (input: unknown) => AuthBlockSchema.parse(input);
const withToken = (token: unknown) => block({ scheme: 'api_key', claim: { token } });

/** The `auth_failed` message `promise` rejects with. */
async function refusal(promise: Promise<void>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AuthError) return err.message;
    throw err;
  }
  throw new Error('expected an AuthError');
}

describe('apiKeyAuthenticator', () => {
  const auth = apiKeyAuthenticator({ keys: { alice: 'secret-a' } });

  it('admits the key registered for the name', async () => {
    await expect(auth.admit({ name: 'alice', auth: withToken('secret-a') })).resolves.toBeUndefined();
  });

  it('refuses a missing token with AG2’s message, and an unknown name and a wrong key alike', async () => {
    expect(await refusal(auth.admit({ name: 'alice', auth: withToken(7) }))).toBe(
      "api_key claim missing required string field 'token'",
    );
    expect(await refusal(auth.admit({ name: 'alice', auth: withToken('') }))).toBe(
      "api_key claim missing required string field 'token'",
    );
    expect(await refusal(auth.admit({ name: 'bob', auth: withToken('secret-a') }))).toBe("admission refused for 'bob'");
    expect(await refusal(auth.admit({ name: 'alice', auth: withToken('secret-b') }))).toBe(
      "admission refused for 'alice'",
    );
    // A prefix or an extension of the key is a mismatch too (the comparison is over hashes, whatever the length).
    expect(await refusal(auth.admit({ name: 'alice', auth: withToken('secret') }))).toBe(
      "admission refused for 'alice'",
    );
    expect(await refusal(auth.admit({ name: 'alice', auth: withToken('secret-aa') }))).toBe(
      "admission refused for 'alice'",
    );
  });

  it('refuses another scheme, naming the one it accepts', async () => {
    expect(await refusal(auth.admit({ name: 'alice', auth: block({}) }))).toBe(
      "auth scheme 'none' is not accepted by this hub: register with scheme 'api_key' and claim { token }",
    );
  });

  it('asks the resolver only for a name without a static key', async () => {
    const asked: string[] = [];
    const resolved = apiKeyAuthenticator({
      keys: { alice: 'secret-a' },
      resolver: (name) => {
        asked.push(name);
        return Promise.resolve(name === 'carol' ? 'secret-c' : null);
      },
    });
    await resolved.admit({ name: 'alice', auth: withToken('secret-a') });
    await resolved.admit({ name: 'carol', auth: withToken('secret-c') });
    expect(await refusal(resolved.admit({ name: 'dave', auth: withToken('x') }))).toBe("admission refused for 'dave'");
    expect(asked).toEqual(['carol', 'dave']);
  });
});

describe('openRegistration and noAdmission', () => {
  it('open registration admits the none scheme and refuses an unknown one', async () => {
    await expect(openRegistration().admit({ name: 'x', auth: block({}) })).resolves.toBeUndefined();
    expect(await refusal(openRegistration().admit({ name: 'x', auth: withToken('k') }))).toBe(
      "unknown auth scheme: 'api_key'",
    );
  });

  it('no admission refuses everyone, naming how to configure admission', async () => {
    expect(await refusal(noAdmission().admit({ name: 'x', auth: withToken('k') }))).toBe(
      'this hub admits no registrations: its operator configures API keys (hub-service --api-keys) or open registration (--open-registration)',
    );
  });
});

describe('storedAuth', () => {
  it('drops the claim and keeps the first 16 hex characters of the token’s SHA-256', () => {
    const digest = createHash('sha256').update('secret-a').digest('hex');
    expect(storedAuth(block({ scheme: 'api_key', issuer: 'acme', claim: { token: 'secret-a', extra: 1 } }))).toEqual({
      scheme: 'api_key',
      issuer: 'acme',
      audience: null,
      key_fingerprint: digest.slice(0, 16),
      claim: {},
    });
    expect(storedAuth(block({ key_fingerprint: 'claimed', claim: { other: 'x' } }))).toEqual({
      scheme: 'none',
      issuer: null,
      audience: null,
      key_fingerprint: null,
      claim: {},
    });
  });
});
