import { IdSchema, OPERATOR_CALLER, type HubNames, type HubOp } from '@ag2net/protocol';

/**
 * A NATS user's permissions as they go into a user JWT: publish and subscribe allow-lists (deny by default: a
 * subject on neither list is refused by the server) and, for responders, the right to answer the requests they
 * receive (`allow_responses`).
 */
export interface UserPermissions {
  readonly pub: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  readonly sub: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  /** Present for responders: may publish `max` replies to a request's reply subject within `ttlMs` (0: 2 min). */
  readonly resp?: { readonly max: number; readonly ttlMs: number };
}

/**
 * The caller-less operations an identity may call: registration and the public directory. The caller-less
 * operations that reveal channel content (`getChannel`, `listChannels`, `adapterState`, `readAudit`) are left out on
 * purpose: nobody may read a channel without naming themselves, so they stay refused until they carry a caller.
 */
export const PUBLIC_OPS: readonly HubOp[] = [
  'register',
  'getAgent',
  'getResume',
  'getSkill',
  'getRule',
  'findAgentId',
  'listAgents',
  'health',
];

/**
 * The reply-inbox prefix of an identity's connection (`inboxPrefix` in nats.js). Each identity has its own, so
 * that no identity can subscribe to another's RPC replies; the shared `_INBOX.>` is never granted to an identity.
 */
export function identityInboxPrefix(agentId: string): string {
  return `_INBOX_${IdSchema.parse(agentId)}`;
}

/**
 * The reply-inbox prefix of the hub-service connection. It does not start with `_INBOX_`, so it cannot collide
 * with an identity's prefix whatever the identity's id.
 */
export function hubServiceInboxPrefix(names: HubNames): string {
  return `_HUB_INBOX_${names.prefix}`;
}

/** The reply-inbox prefix of the registrant connection (shared by every process that registers). */
export function registrantInboxPrefix(names: HubNames): string {
  return `_REGISTRANT_INBOX_${names.prefix}`;
}

/**
 * The subjects on which `caller` may send its own requests, and only those:
 * - `<p>.hub.v1.<op>.<caller>` (`names.rpc`): the home partition's operations, and every operation of a deployment
 *   with one partition;
 * - `<p>.hub.v1.<op>.<partition>.<caller>` (`names.rpcIn`): an operation about a channel of one partition
 *   (`PARTITIONED_OPS`), or one partition's share of a scattered operation (`SCATTERED_OPS`).
 * Both whatever the deployment's partition count, so that a JWT stays valid when the count changes. The caller is the
 * last token of both, where the hub reads it: another caller's subjects stay refused. The caller-less operations are
 * served on `<p>.hub.v1.<op>` alone (four tokens), which neither pattern matches, and every routed operation names
 * its caller.
 */
function callerRequests(names: HubNames, caller: string): string[] {
  return [names.rpc('*', caller), `${names.prefix}.hub.v1.*.*.${caller}`];
}

/**
 * What one identity may do, and nothing else:
 * - publish its own requests, `<p>.hub.v1.<op>.<id>` and the routed `<p>.hub.v1.<op>.<partition>.<id>`
 *   (`callerRequests`: the id is the last token of both), and the caller-less public operations (`PUBLIC_OPS`,
 *   `<p>.hub.v1.<op>` only);
 * - pull from, read the info of and ack on its own inbox consumer only;
 * - subscribe to its own reply inbox only.
 *
 * Nothing on the WAL, the inbox subjects, KV buckets, stream or consumer management, or another identity's
 * subjects: a request on another identity's subject, a direct publish to any stream, a consumer it did not get from
 * the hub, and any `$KV`/`$JS.API.DIRECT`/`STREAM.MSG.GET` read are refused by NATS before the hub sees them.
 */
export function identityPermissions(names: HubNames, agentId: string): UserPermissions {
  const id = IdSchema.parse(agentId);
  const consumer = names.inboxConsumer(id);
  return {
    pub: {
      allow: [
        ...callerRequests(names, id),
        ...PUBLIC_OPS.map((op) => names.rpc(op)),
        `$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.${consumer}`,
        `$JS.API.CONSUMER.INFO.${names.inboxStream}.${consumer}`,
        `$JS.ACK.${names.inboxStream}.${consumer}.>`,
      ],
      deny: [],
    },
    sub: { allow: [`${identityInboxPrefix(id)}.>`], deny: [] },
  };
}

/**
 * The registrant: may call `register`, `attach` (fresh credentials for an identity whose JWT lapsed, which cannot
 * connect to renew) and `health`, and read the replies, nothing else.
 */
export function registrantPermissions(names: HubNames): UserPermissions {
  return {
    pub: { allow: [names.rpc('register'), names.rpc('attach'), names.rpc('health')], deny: [] },
    sub: { allow: [`${registrantInboxPrefix(names)}.>`], deny: [] },
  };
}

/** What the hub does with one of its streams, and so which JetStream API subjects it may call on it. */
interface StreamUse {
  readonly stream: string;
  /** Reads single messages (leader and direct gets). */
  readonly reads: boolean;
  /** Pulls from consumers of its own on it (ordered readers, KV watchers, its delivery consumer). */
  readonly pulls: boolean;
  /**
   * Purges by subject: the inbox of an unregistered identity; on the WAL, the subject of a channel whose history
   * retention ran out (`HubOptions.retainClosedMs`). NATS cannot restrict a purge to a subject filter, so the right is
   * to the stream's purge API; the hub only ever sends it with a filter of its own making.
   */
  readonly purges: boolean;
}

/**
 * Every stream the hub creates, with what it does there: the WAL and the audit trail are read and tailed, and a
 * channel's WAL subject is purged once its history retention ran out; the inbox stream is written and its
 * per-identity consumers made, read for their depth and removed, but never pulled or read by the hub; the backing
 * streams of its KV buckets are read and watched.
 */
function hubStreams(names: HubNames): StreamUse[] {
  const kv = names.buckets.map((b) => ({ stream: `KV_${b}`, reads: true, pulls: true, purges: false }));
  return [
    { stream: names.walStream, reads: true, pulls: true, purges: true },
    { stream: names.auditStream, reads: true, pulls: true, purges: false },
    { stream: names.inboxStream, reads: false, pulls: false, purges: true },
    ...kv,
  ];
}

/**
 * Exactly what the hub uses, derived from its code (`provision`, the WAL writer and reader, delivery, the audit
 * log, the lease, the registry and the RPC server):
 * - RPC: subscribe to `<p>.hub.v1.>`, which holds the home subjects `<p>.hub.v1.<op>[.<caller>]` and the routed
 *   `<p>.hub.v1.<op>.<partition>.<caller>` of every partition (no queue group: only a partition's lease holder
 *   subscribes to its subjects), and answer each request once (`allow_responses`);
 * - the roster: subscribe to `<p>.hubs.v1.ping` (`names.hubsPing`, no queue group) and answer it the same way;
 * - presence: subscribe to its own `<p>.hubs.v1.alive.<hub_id>` and probe the other hubs' (`names.hubAlive`; nothing
 *   is ever answered there);
 * - streams `<P>_WAL`, `<P>_INBOX`, `<P>_AUDIT` and `KV_<bucket>` of its buckets: info, create and update; on the
 *   WAL, the audit trail and the buckets also leader and direct reads, consumers of its own (create, info, delete,
 *   pull) and the flow control of its ordered consumers; on the WAL a purge (by a channel's subject, after its
 *   retention); on the inbox stream the identities' durable consumers (create, info, delete) and a purge by subject,
 *   but no read and no pull: the hub never takes an identity's deliveries;
 * - appends to `<p>.wal.>`, `<p>.agent.*.inbox`, `<p>.audit.>` and `$KV.<bucket>.>`; acks of its delivery consumers (every consumer of the WAL is its own);
 * - `$JS.API.INFO` (nats.js checks the API when it opens a JetStream manager);
 * - subscribe to its own reply inbox (`hubServiceInboxPrefix`).
 * It gets no stream deletion, no purge of the audit trail or a bucket, no other prefix, and no identity's reply inbox.
 */
export function hubServicePermissions(names: HubNames): UserPermissions {
  const perStream = hubStreams(names).flatMap(({ stream: s, reads, pulls, purges }) => [
    `$JS.API.STREAM.INFO.${s}`,
    `$JS.API.STREAM.CREATE.${s}`,
    `$JS.API.STREAM.UPDATE.${s}`,
    ...(purges ? [`$JS.API.STREAM.PURGE.${s}`] : []),
    ...(reads ? [`$JS.API.STREAM.MSG.GET.${s}`, `$JS.API.DIRECT.GET.${s}`, `$JS.API.DIRECT.GET.${s}.>`] : []),
    `$JS.API.CONSUMER.CREATE.${s}`,
    `$JS.API.CONSUMER.CREATE.${s}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${s}.*`,
    `$JS.API.CONSUMER.INFO.${s}.*`,
    `$JS.API.CONSUMER.DELETE.${s}.*`,
    ...(pulls ? [`$JS.API.CONSUMER.MSG.NEXT.${s}.*`, `$JS.FC.${s}.>`] : []),
  ]);
  return {
    pub: {
      allow: [
        '$JS.API.INFO',
        ...perStream,
        names.walAll,
        names.inboxAll,
        `${names.prefix}.audit.>`,
        ...names.buckets.map((b) => `$KV.${b}.>`),
        // The delivery consumers: `hub_delivery`, or `hub_delivery_<k>` of each partition (a count fixed later, when
        // the prefix is provisioned). Every consumer of the WAL is the hub's own.
        `$JS.ACK.${names.walStream}.*.>`,
        names.hubAliveAll,
      ],
      deny: [],
    },
    sub: {
      allow: [`${names.prefix}.hub.v1.>`, names.hubsPing, names.hubAliveAll, `${hubServiceInboxPrefix(names)}.>`],
      deny: [],
    },
    resp: { max: 1, ttlMs: 0 },
  };
}

/** The reply-inbox prefix of the operator caller's connection (the web console's operator sessions). */
export function operatorCallerInboxPrefix(names: HubNames): string {
  return `_OPERATOR_INBOX_${names.prefix}`;
}

/**
 * The operator caller: a user of the identity account that acts as `OPERATOR_CALLER` through the hub's operations
 * (`<p>.hub.v1.<op>.$operator` and the routed `<p>.hub.v1.<op>.<partition>.$operator`, `callerRequests`), asks the
 * hub roster and calls the public operations, and reads its own replies; nothing else. It is what the bridge's operator sessions use, so that the bridge never holds a credential of the
 * data account.
 */
export function operatorCallerPermissions(names: HubNames): UserPermissions {
  return {
    pub: {
      allow: [...callerRequests(names, OPERATOR_CALLER), names.hubsPing, ...PUBLIC_OPS.map((op) => names.rpc(op))],
      deny: [],
    },
    sub: { allow: [`${operatorCallerInboxPrefix(names)}.>`], deny: [] },
  };
}

/**
 * The operator (administrator) of the deployment: reads and manages everything in the data account (every stream,
 * the full WAL and audit trail, every bucket, every RPC, the hub roster `names.hubsPing` and the delivery consumer's
 * info), with the default reply inbox; `>` holds every RPC subject, the routed `<p>.hub.v1.<op>.<partition>.<caller>`
 * included. Publishing straight onto the WAL, the inboxes and the lease key is denied: only the hub writes there, and
 * an administrator's tool must not break the single writer by accident. This is a guard against mistakes, not against a hostile administrator, who
 * holds the account's keys anyway.
 */
export function operatorPermissions(names: HubNames): UserPermissions {
  return {
    pub: { allow: ['>'], deny: [names.walAll, names.inboxAll, `$KV.${names.leasesBucket}.>`] },
    sub: { allow: ['>'], deny: [] },
    resp: { max: 1, ttlMs: 0 },
  };
}
