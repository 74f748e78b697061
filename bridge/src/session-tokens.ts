import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

const TOKEN_KEY_SALT = 'ag2net-bridge session token v1';

/** What a bearer token says: who signed in, whether as the operator, and when it lapses (seconds since the epoch). */
export const SessionClaimsSchema = z.strictObject({
  v: z.literal(1),
  /** The person's name, or `$operator`. */
  sub: z.string().min(1).max(128),
  operator: z.boolean(),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type SessionClaims = z.infer<typeof SessionClaimsSchema>;

/**
 * Issues and checks the bridge's bearer tokens: `base64url(claims).base64url(HMAC-SHA256)`, keyed by a key derived
 * from the bridge secret, so every replica with the same secret accepts the tokens of every other and none keeps
 * state. A token is good until its `exp`; it carries no credential of the person.
 */
export class SessionTokens {
  readonly #key: Buffer;

  constructor(secret: Uint8Array) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, TOKEN_KEY_SALT, 'session', 32));
  }

  issue(claims: Omit<SessionClaims, 'v'>): string {
    const body = Buffer.from(JSON.stringify({ v: 1, ...claims })).toString('base64url');
    return `${body}.${this.#mac(body).toString('base64url')}`;
  }

  /** The claims of a token this bridge's secret signed and that has not expired at `nowMs`; `null` otherwise. */
  verify(token: string, nowMs: number): SessionClaims | null {
    const [body, mac, extra] = token.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return null;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.#mac(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    const claims = SessionClaimsSchema.safeParse(json);
    if (!claims.success || claims.data.exp * 1000 <= nowMs) return null;
    return claims.data;
  }

  #mac(body: string): Buffer {
    return createHmac('sha256', this.#key).update(body).digest();
  }
}
