/**
 * A bench host: the process the hub runs in during the bench, driven by the bench over Node's IPC channel. It starts
 * the hub with `startHub` as hub-service does (default options, its own NATS connection) minus the pino logger and
 * with the operator's limits lifted (`BENCH_LIMITS`: the bench measures admission, not governance), and measures it from inside: memory after garbage collection, the duration of a sweeper tick, the time
 * from start to active (hydrate). It also runs the raw baselines that need a process of their own (echo responder,
 * relay, stream replay), so that hub and baseline run in the same kind of process.
 *
 * Started by `HostProcess.start()` with `--expose-gc` (and `--cpu-prof` under `npm run bench -- --profile`).
 */
import { startHub, type Hub } from '@ag2net/hub';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';
import { startEcho } from '../raw/echo.js';
import { RawRelay } from '../raw/relay.js';
import { loadBucket, replayStream } from '../raw/replay.js';
import { BENCH_LIMITS } from '../limits.js';
import { benchAuth } from '../nats-auth.js';
import { HOST_OPS, HostRequestSchema, type HostOp, type HostReply, type HostResult } from './protocol.js';

/** Each handler parses its own parameters with its operation's schema. */
type Handlers = { readonly [Op in HostOp]: (params: unknown) => Promise<HostResult<Op>> };

/**
 * The operator's ceilings lifted far above what any scenario sends: the default rate and inbox ceilings are meant for
 * hostile agents and would throttle the load generators (whose recipients never drain their inboxes).
 */

let hub: Hub | null = null;
/** The hub's own connection, as hub-service gives it one (the host's is shared by the baselines). */
let hubConnection: NatsConnection | null = null;
let nc: NatsConnection | null = null;
const subs: Subscription[] = [];
const relays: RawRelay[] = [];

async function connection(servers: string): Promise<NatsConnection> {
  // The relay and the baselines run here: no `Error` with a stack per request, as the hub's connection.
  nc ??= await connect({ servers, name: 'bench-host', noAsyncTraces: true, ...benchAuth() });
  return nc;
}

const handlers: Handlers = {
  async startHub(params) {
    const { servers, prefix, standby = false, partitions } = HOST_OPS.startHub.params.parse(params);
    if (hub !== null) throw new Error('a hub is already running in this host');
    const started = performance.now();
    // The options hub-service connects its hub with (`connectionOptions`): without `noAsyncTraces` every request
    // builds an Error with a stack, which the hub pays several times per admitted envelope.
    hubConnection = await connect({
      servers,
      name: 'bench-hub',
      maxReconnectAttempts: -1,
      noAsyncTraces: true,
      ...benchAuth(),
    });
    hub = await startHub({
      connection: hubConnection,
      prefix,
      limits: BENCH_LIMITS,
      awaitActive: !standby,
      ...(partitions === undefined ? {} : { partitions }),
    });
    return { start_ms: performance.now() - started, hub_id: hub.hubId };
  },
  async stopHub() {
    await hub?.close();
    await hubConnection?.close();
    hub = null;
    hubConnection = null;
    return {};
  },
  hubState() {
    if (hub === null) return Promise.reject(new Error('no hub is running in this host'));
    const held = hub.health().held.map((h) => h.partition);
    return Promise.resolve({ hub_id: hub.hubId, role: hub.role, epoch: hub.epoch, held });
  },
  memory() {
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    return Promise.resolve({ heap_used: m.heapUsed, rss: m.rss, external: m.external, array_buffers: m.arrayBuffers });
  },
  cpu() {
    const { user, system } = process.cpuUsage();
    return Promise.resolve({ user_us: user, system_us: system });
  },
  async tick(params) {
    const { count } = HOST_OPS.tick.params.parse(params);
    if (hub === null) throw new Error('no hub is running in this host');
    const durations: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const started = performance.now();
      await hub.tick();
      durations.push(performance.now() - started);
    }
    return { durations_ms: durations };
  },
  async startEcho(params) {
    const { servers, subject } = HOST_OPS.startEcho.params.parse(params);
    subs.push(startEcho(await connection(servers), subject));
    return {};
  },
  async startRelay(params) {
    const { servers, prefix } = HOST_OPS.startRelay.params.parse(params);
    relays.push(await RawRelay.start(await connection(servers), prefix));
    return {};
  },
  async replay(params) {
    const { servers, stream, decode } = HOST_OPS.replay.params.parse(params);
    return replayStream(await connection(servers), stream, decode);
  },
  async kvLoad(params) {
    const { servers, bucket } = HOST_OPS.kvLoad.params.parse(params);
    return loadBucket(await connection(servers), bucket);
  },
};

async function handle(raw: unknown): Promise<HostReply> {
  const request = HostRequestSchema.safeParse(raw);
  if (!request.success) return { id: -1, ok: false, error: `bad host request: ${request.error.message}` };
  const { id, op } = request.data;
  try {
    return { id, ok: true, result: await handlers[op](request.data.params) };
  } catch (err) {
    return { id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}

/** The driver went away (normal end, or it crashed): stop everything and exit, which writes a CPU profile. */
async function shutdown(): Promise<void> {
  await hub?.close().catch(() => undefined);
  for (const relay of relays) await relay.stop().catch(() => undefined);
  for (const sub of subs) sub.unsubscribe();
  await nc?.close().catch(() => undefined);
  process.exit(0);
}

process.on('message', (raw) => {
  void handle(raw).then((reply) => process.send?.(reply));
});
process.on('disconnect', () => void shutdown());
process.send?.({ id: 0, ok: true, result: { ready: true } });
