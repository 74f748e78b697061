import type { Msg } from '@nats-io/transport-node';
import { z } from 'zod';

/**
 * The header nats-server sets on a request that crossed a service import: the requester's account and, where the
 * importing account shares them, its connection, user key, name and JWT. The server writes it itself (it replaces
 * any header of that name the requester sent), so it is evidence of who is calling, not a claim.
 */
export const REQUEST_INFO_HEADER = 'Nats-Request-Info';

/** The longest `Nats-Request-Info` the hub reads (a JWT plus connection details fit in a few KB). */
const MAX_REQUEST_INFO_CHARS = 16_384;

/** The fields of `Nats-Request-Info` the hub uses. */
const RequestInfoSchema = z.looseObject({
  acc: z.string().min(1),
  user: z.string().optional(),
  name_tag: z.string().optional(),
  host: z.string().optional(),
  id: z.number().int().optional(),
  server: z.string().optional(),
  jwt: z.string().optional(),
});

/** The claims of a user JWT the hub reads from `Nats-Request-Info`: when it was issued. */
const JwtClaimsSchema = z.looseObject({ iat: z.number().int().min(0) });

/**
 * Where a request came from, as the server reports it:
 * - `local`: from a user of the hub's own account (another hub, the operator's `admin` tools): no service import,
 *   no `Nats-Request-Info`, a reply inbox of its own;
 * - `imported`: through the account's service export, from the account `account` (on a secured deployment, the
 *   identity account), with the requester's details where the import shares them.
 */
export type CallerOrigin =
  | { readonly kind: 'local' }
  | {
      readonly kind: 'imported';
      readonly account: string;
      /** The requester's nkey user public key. */
      readonly user: string | null;
      /** The `name` of the requester's user JWT: an identity's agent id, `$operator`, `registrant`. */
      readonly name: string | null;
      /** The requester's source address. */
      readonly host: string | null;
      /** The requester's connection: server id and client id, unique while it lives. */
      readonly connection: string | null;
      /** `iat` of the JWT the requester connected with (unix seconds), or `null` when not shared. */
      readonly jwtIssuedAt: number | null;
    };

/** The verdict on a request's origin: served from `origin`, or dropped unanswered for `reason`. */
export type OriginVerdict =
  { readonly ok: true; readonly origin: CallerOrigin } | { readonly ok: false; readonly reason: string };

/** What `originOf` checks against. */
export interface OriginPolicy {
  /**
   * The only account requests may be imported from (the identity account of a secured deployment); `null` on a hub
   * that issues no credentials, where any importing account is accepted.
   */
  readonly importAccount: string | null;
}

/**
 * A reply inbox of a user of the hub's own account, or of any client on a deployment without accounts: `_INBOX.…`,
 * `_INBOX_<id>.…`, `_HUB_INBOX_<p>.…`, `_REGISTRANT_INBOX_<p>.…`, `_OPERATOR_INBOX_<p>.…`.
 */
const LOCAL_REPLY = /^_(?:[A-Z]+_)*INBOX(?:_[^.]*)?\./;

/** The reply subject nats-server mints for a request that crossed a service import. */
const IMPORTED_REPLY = /^_R_\./;

/**
 * Decides whether a request may be served and answered (`of`), before it is parsed. A responder publishes its answer on the
 * reply subject the requester chose, with the responder's own rights, so the hub answers only replies it can
 * attribute to the caller:
 * - a request without a reply subject is dropped (nobody asked for an answer; a request the hub cannot answer is not
 *   one it acts on);
 * - an imported request (it carries `Nats-Request-Info`) must come from `policy.importAccount` and carry a reply the
 *   server minted (`_R_.…`), which the server routes back into the requester's account and nowhere else;
 * - a local request (no `Nats-Request-Info`) must carry a reply inbox (`LOCAL_REPLY`): never a subject of a stream,
 *   a bucket, the JetStream API or another hub operation.
 * Anything else is dropped unanswered: the hub publishes nothing for it.
 */
export class CallerOrigins {
  /** Parsed `Nats-Request-Info` values: one connection sends the same one until its round-trip time changes. */
  readonly #seen = new Map<string, CallerOrigin | null>();

  constructor(private readonly policy: OriginPolicy) {}

  of(msg: Pick<Msg, 'reply' | 'headers'>): OriginVerdict {
    const reply = msg.reply ?? '';
    if (reply === '') return { ok: false, reason: 'no reply subject' };
    const raw = msg.headers?.get(REQUEST_INFO_HEADER) ?? '';
    if (raw === '') {
      return LOCAL_REPLY.test(reply)
        ? { ok: true, origin: { kind: 'local' } }
        : { ok: false, reason: 'reply subject is not an inbox' };
    }
    if (!IMPORTED_REPLY.test(reply)) return { ok: false, reason: 'imported request without a server-minted reply' };
    const origin = this.#imported(raw);
    if (origin === null || origin.kind !== 'imported') return { ok: false, reason: 'unreadable request info' };
    if (this.policy.importAccount !== null && origin.account !== this.policy.importAccount) {
      return { ok: false, reason: 'request imported from another account' };
    }
    return { ok: true, origin };
  }

  #imported(raw: string): CallerOrigin | null {
    const known = this.#seen.get(raw);
    if (known !== undefined) return known;
    const info = parseRequestInfo(raw);
    const origin: CallerOrigin | null =
      info === null
        ? null
        : {
            kind: 'imported',
            account: info.acc,
            user: info.user ?? null,
            name: info.name_tag ?? null,
            host: info.host ?? null,
            connection: info.id === undefined ? null : `${info.server ?? ''}/${info.id}`,
            jwtIssuedAt: info.jwt === undefined ? null : jwtIssuedAt(info.jwt),
          };
    // Bounded: a flood of distinct values only empties the cache.
    if (this.#seen.size >= ORIGIN_CACHE_SIZE) this.#seen.clear();
    this.#seen.set(raw, origin);
    return origin;
  }
}

/** How many distinct `Nats-Request-Info` values `CallerOrigins` keeps parsed. */
const ORIGIN_CACHE_SIZE = 4096;

function parseRequestInfo(raw: string): z.infer<typeof RequestInfoSchema> | null {
  if (raw.length > MAX_REQUEST_INFO_CHARS) return null;
  try {
    const parsed = RequestInfoSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The `iat` of a user JWT the server verified when the requester connected; `null` when it cannot be read. */
function jwtIssuedAt(jwt: string): number | null {
  const payload = jwt.split('.')[1];
  if (payload === undefined) return null;
  try {
    const parsed = JwtClaimsSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data.iat : null;
  } catch {
    return null;
  }
}
