import { createHash, timingSafeEqual } from 'node:crypto';
import { repr } from '@ag2net/protocol/internal';
import { AuthError, type AuthBlock } from '@ag2net/protocol';

/** The auth scheme of AG2's `ApiKeyAuth`: the passport's `auth.claim.token` is the identity's API key. */
export const API_KEY_SCHEME = 'api_key';
/** The auth scheme of AG2's `NoAuth`. */
export const NO_AUTH_SCHEME = 'none';

/** What an authenticator is asked to admit: the name the party registers (or attaches) under and its auth block. */
export interface AdmissionRequest {
  readonly name: string;
  readonly auth: AuthBlock;
}

/**
 * Decides who may register (and attach) on a hub: AG2's `AuthAdapter`, as one object for the hub. `admit` resolves
 * when the party may have an identity under `name`, and rejects with `AuthError` (`auth_failed`) otherwise; any other
 * rejection is the authenticator's own failure and is answered `internal`. The hub never stores nor returns the
 * claim it checked.
 */
export interface Authenticator {
  /** The auth schemes this authenticator accepts, for messages and logs. */
  readonly schemes: readonly string[];
  admit(request: AdmissionRequest): Promise<void>;
}

/**
 * Anyone may register: accepts the `none` scheme (the default auth block), refuses any other scheme as AG2's default
 * registry does ("unknown auth scheme: 'x'"). Configure it only where every process that can reach the hub may have
 * an identity.
 */
export function openRegistration(): Authenticator {
  return {
    schemes: [NO_AUTH_SCHEME],
    admit: ({ auth }) =>
      auth.scheme === NO_AUTH_SCHEME
        ? Promise.resolve()
        : Promise.reject(new AuthError(`unknown auth scheme: ${repr(auth.scheme)}`)),
  };
}

/** Options of `apiKeyAuthenticator`. */
export interface ApiKeyAuthenticatorOptions {
  /** API keys by identity name. */
  readonly keys?: Readonly<Record<string, string>>;
  /**
   * Looks up the key of a name that `keys` lacks (a secrets store, say); `null` when the name has none. Consulted
   * only when `keys` has no entry for the name.
   */
  readonly resolver?: (name: string) => Promise<string | null>;
}

/**
 * AG2's `ApiKeyAuth`: the passport's auth block must be `{ scheme: 'api_key', claim: { token } }` with the key
 * registered for its name (`keys[name]`, else `resolver(name)`). Errors, all `auth_failed`: AG2's "api_key claim
 * missing required string field 'token'", and `refusedAdmission` for both a name without a key and a wrong key (AG2
 * tells them apart, "no api_key registered for 'x'" and "api_key mismatch for 'x'", which lets anyone list the names
 * of the keys file).
 * Keys are compared in constant time (SHA-256 of each, then `timingSafeEqual`), so neither the length nor a prefix of
 * the expected key leaks through the answer time. Another scheme is refused naming the one this hub accepts.
 */
export function apiKeyAuthenticator(options: ApiKeyAuthenticatorOptions = {}): Authenticator {
  const keys = new Map(Object.entries(options.keys ?? {}));
  const resolver = options.resolver;
  return {
    schemes: [API_KEY_SCHEME],
    admit: async ({ name, auth }) => {
      if (auth.scheme !== API_KEY_SCHEME) {
        throw new AuthError(
          `auth scheme ${repr(auth.scheme)} is not accepted by this hub: register with scheme 'api_key' and claim { token }`,
        );
      }
      const token = tokenOf(auth);
      if (token === null || token === '') {
        throw new AuthError("api_key claim missing required string field 'token'");
      }
      const expected = keys.get(name) ?? (resolver === undefined ? null : await resolver(name));
      // A name without a key is compared against a key nobody holds, so that both refusals take the same time.
      const matches = timingSafeEqual(sha256(token), sha256(expected ?? UNMATCHABLE));
      if (expected === null || expected === undefined || !matches) throw refusedAdmission(name);
    },
  };
}

/** What a name without an API key is compared against: no token hashes to its hash's preimage. */
const UNMATCHABLE = '\u0000no key';

/**
 * The one answer to every refused admission credential (no key for the name, a wrong key, a revoked identity):
 * `auth_failed` naming only the name asked for, so that a refusal tells nobody which names exist.
 */
export function refusedAdmission(name: string): AuthError {
  return new AuthError(`admission refused for ${repr(name)}`);
}

/**
 * What a secured hub with no authenticator configured does: refuses every registration, naming the two ways to
 * configure one. Issuing credentials to anyone who asks must be a decision, never a default.
 */
export function noAdmission(): Authenticator {
  return {
    schemes: [],
    admit: () =>
      Promise.reject(
        new AuthError(
          'this hub admits no registrations: its operator configures API keys (hub-service --api-keys) or open registration (--open-registration)',
        ),
      ),
  };
}

/** The claim's `token` when it is a string, else `null`. */
export function tokenOf(auth: AuthBlock): string | null {
  const token = auth.claim['token'];
  return typeof token === 'string' ? token : null;
}

/**
 * The auth block the hub keeps and shows for a presented one: the scheme, issuer and audience as given, no claim,
 * and `key_fingerprint` = the first 16 hex characters of the SHA-256 of the claim's token (`null` without a token),
 * which tells two keys apart without revealing either.
 */
export function storedAuth(auth: AuthBlock): AuthBlock {
  const token = tokenOf(auth);
  return {
    ...auth,
    claim: {},
    key_fingerprint: token === null ? null : sha256(token).toString('hex').slice(0, 16),
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
