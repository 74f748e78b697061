import { z } from 'zod';

/**
 * What the bench driver asks of a host process over Node's IPC channel: run a hub (and measure it from inside), or
 * run one of the raw baselines that need a process of their own. Each request has an id; each reply carries it.
 */
const Empty = z.strictObject({});
const servers = z.string().min(1);

export const MemorySchema = z.strictObject({
  heap_used: z.number().int().min(0),
  rss: z.number().int().min(0),
  external: z.number().int().min(0),
  array_buffers: z.number().int().min(0),
});

export const HOST_OPS = {
  /**
   * `startHub` with the given prefix; resolves once the hub is active (after hydrate), or with `standby` as soon as it
   * competes for the lease (`awaitActive: false`), whichever role it then has. `partitions` (default 1) spreads the
   * prefix's channels over that many partitions, each served by one of the prefix's running hubs.
   */
  startHub: {
    params: z.strictObject({
      servers,
      prefix: z.string().min(1),
      standby: z.boolean().optional(),
      partitions: z.number().int().positive().optional(),
    }),
    result: z.strictObject({ start_ms: z.number(), hub_id: z.string() }),
  },
  /** The running hub's role, the epoch of its lease (0 on a standby) and the partitions it serves now (`held`). */
  hubState: {
    params: Empty,
    result: z.strictObject({
      hub_id: z.string(),
      role: z.enum(['active', 'standby']),
      epoch: z.number().int().min(0),
      held: z.array(z.number().int().min(0)),
    }),
  },
  /** Graceful hub stop: drains, releases the lease. */
  stopHub: { params: Empty, result: Empty },
  /** Memory after two full garbage collections (the host runs with `--expose-gc`). */
  memory: { params: Empty, result: MemorySchema },
  /** CPU time this process has used so far (`process.cpuUsage()`), in µs. */
  cpu: { params: Empty, result: z.strictObject({ user_us: z.number(), system_us: z.number() }) },
  /** Runs the hub's sweepers `count` times, one after the other; the duration of each. */
  tick: {
    params: z.strictObject({ count: z.number().int().positive() }),
    result: z.strictObject({ durations_ms: z.array(z.number()) }),
  },
  /** A core NATS responder that answers every request on `subject` with its own payload. */
  startEcho: { params: z.strictObject({ servers, subject: z.string().min(1) }), result: Empty },
  /** The raw relay: the hub's hops (append with OCC, reply, fan out to inboxes) with no hub logic. */
  startRelay: { params: z.strictObject({ servers, prefix: z.string().min(1) }), result: Empty },
  /**
   * Replays a whole stream with an ordered consumer, as fast as it comes, decoding each message: not at all (the
   * baseline), with `JSON.parse`, or with `JSON.parse` and the envelope schema (what the hub's WAL reader does).
   */
  replay: {
    params: z.strictObject({ servers, stream: z.string().min(1), decode: z.enum(['none', 'json', 'schema']) }),
    result: z.strictObject({ messages: z.number().int().min(0), seconds: z.number() }),
  },
  /** Reads every key of a KV bucket one get at a time, as the hub's hydrate reads channel metadata. */
  kvLoad: {
    params: z.strictObject({ servers, bucket: z.string().min(1) }),
    result: z.strictObject({ keys: z.number().int().min(0), seconds: z.number() }),
  },
} as const;

export type HostOp = keyof typeof HOST_OPS;
export type HostParams<Op extends HostOp> = z.input<(typeof HOST_OPS)[Op]['params']>;
export type HostResult<Op extends HostOp> = z.infer<(typeof HOST_OPS)[Op]['result']>;

const HOST_OP_NAMES = [
  'startHub',
  'stopHub',
  'hubState',
  'memory',
  'cpu',
  'tick',
  'startEcho',
  'startRelay',
  'replay',
  'kvLoad',
] as const satisfies readonly HostOp[];
// Every operation is listed: this fails to compile when one is missing.
const _allListed: Exclude<HostOp, (typeof HOST_OP_NAMES)[number]> extends never ? true : never = true;

export const HostRequestSchema = z.strictObject({
  id: z.number().int(),
  op: z.enum(HOST_OP_NAMES),
  params: z.unknown(),
});
export type HostRequest = z.infer<typeof HostRequestSchema>;

export const HostReplySchema = z.discriminatedUnion('ok', [
  z.strictObject({ id: z.number().int(), ok: z.literal(true), result: z.unknown() }),
  z.strictObject({ id: z.number().int(), ok: z.literal(false), error: z.string() }),
]);
export type HostReply = z.infer<typeof HostReplySchema>;
