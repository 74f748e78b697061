import { z } from 'zod';

/**
 * The shape of `bench/results/latest.json`. Every figure is a finite number (NaN and Infinity are refused), so a
 * scenario that measured nothing fails validation instead of writing `null`. Times are in ms unless the name says
 * `_s`; rates are per second; ratios are hub ÷ raw (for latencies: hub ÷ raw, lower is better).
 */
const num = z.number();
const count = z.number().int().min(0);

export const LatencySummarySchema = z.strictObject({
  count,
  p50_ms: num,
  p90_ms: num,
  p99_ms: num,
  max_ms: num,
  mean_ms: num,
});

/** CPU a process used during a measurement window: cores' worth (1 = one core busy) and µs per operation. */
export const CpuShareSchema = z.strictObject({ core_share: num, us_per_op: num });

/** A closed-loop throughput run: operations completed inside the measurement window. */
export const ThroughputSchema = z.strictObject({
  per_s: num,
  count,
  seconds: num,
  errors: count,
  in_flight: count,
  latency: LatencySummarySchema,
  /** By process (`driver`, `hub`, `nats-server` when the bench started it). */
  cpu: z.record(z.string(), CpuShareSchema),
});

const AdmissionCaseSchema = z.strictObject({
  channels: count,
  /** The baseline: the hub's appends, done directly. */
  raw: ThroughputSchema,
  /** The raw relay: request → append → reply → fan-out, the hub's hops with none of its logic. */
  relay: ThroughputSchema,
  hub: ThroughputSchema,
  ratio: num,
  /** hub ÷ relay: what the hub's logic costs beyond its hops. */
  relay_ratio: num,
  /** Envelopes fanned out to inboxes per second, from the first post until the delivery consumer caught up. */
  hub_delivery_per_s: num,
});

export const AdmissionResultSchema = z.strictObject({
  payload_bytes: count,
  agents: count,
  setup_s: num,
  spread: AdmissionCaseSchema,
  hot: AdmissionCaseSchema,
});

export const LatencyResultSchema = z.strictObject({
  samples: count,
  request_reply: LatencySummarySchema,
  js_publish: LatencySummarySchema,
  raw_sum_p50_ms: num,
  raw_sum_p99_ms: num,
  hub_ack: LatencySummarySchema,
  hub_delivery: LatencySummarySchema,
  raw_pipeline_ack: LatencySummarySchema,
  raw_pipeline_delivery: LatencySummarySchema,
  ack_p50_ratio: num,
  ack_p99_ratio: num,
  delivery_p50_ratio: num,
  delivery_p99_ratio: num,
});

export const FanoutResultSchema = z.strictObject({
  participants: count,
  samples: count,
  hub_ack: LatencySummarySchema,
  hub_all: LatencySummarySchema,
  raw_ack: LatencySummarySchema,
  raw_all: LatencySummarySchema,
  all_p50_ratio: num,
  all_p99_ratio: num,
});

const ReplayRunSchema = z.strictObject({ seconds: num, per_s: num });

export const HydrateResultSchema = z.strictObject({
  channels: count,
  envelopes_posted: count,
  wal_messages: count,
  seed_s: num,
  seed_per_s: num,
  /** A hub started in a fresh process (cold JIT), as after a crash. */
  hub_first: ReplayRunSchema,
  /** The same hydrate again in the same process (warm JIT): the headline figure. */
  hub_warm: ReplayRunSchema,
  raw_first: ReplayRunSchema,
  raw_warm: ReplayRunSchema,
  ratio: num,
  ratio_first: num,
  /** The replay again, with `JSON.parse` of each message: a component of hydrate. */
  replay_json: ReplayRunSchema,
  /** The replay again, with `JSON.parse` and `EnvelopeSchema.parse` (what the hub's WAL reader does). */
  replay_schema: ReplayRunSchema,
  /** Reading every channel's metadata from KV the way hydrate does (keys, then one get each): a component. */
  kv_metadata_load_s: num,
});

export const ColdStartResultSchema = z.strictObject({
  wal_messages: count,
  channels: count,
  open_channels: count,
  /** Envelopes in the open channels: what the hub's live state is the fold of. */
  open_envelopes: count,
  /** Writing the history straight into the streams (setup). */
  write_s: num,
  /** A hub's first start on the history, before any snapshot exists (fresh process). */
  first_start_s: num,
  first_open_per_s: num,
  /** A hub's start once the snapshots exist, in a fresh process (cold JIT): the headline figure. */
  cold_start_s: num,
  /** The same again in the same process (warm JIT). */
  warm_start_s: num,
  /** Open envelopes ÷ `cold_start_s`: how fast the hub regains the state of what is open. */
  cold_open_per_s: num,
  /** An ordered consumer replaying the whole WAL. */
  raw_replay_s: num,
  raw_replay_per_s: num,
  /** `cold_open_per_s` ÷ `raw_replay_per_s`. */
  open_ratio: num,
  /** The same for the first start (no snapshots). */
  first_open_ratio: num,
});

const MemorySchema = z.strictObject({ heap_used: count, rss: count, external: count, array_buffers: count });

export const ScaleResultSchema = z.strictObject({
  agents: count,
  channels: count,
  register_s: num,
  create_s: num,
  create_per_s: num,
  memory_start: MemorySchema,
  memory_agents: MemorySchema,
  memory_channels: MemorySchema,
  heap_per_agent_bytes: num,
  heap_per_channel_bytes: num,
  rss_per_channel_bytes: num,
  tick: LatencySummarySchema,
});

const LargeLogCaseSchema = z.strictObject({
  channels: count,
  /** The baseline: the hub's appends, done directly (into a fresh stream). */
  raw: ThroughputSchema,
  /** A hub whose log holds only its own channels' handshakes and what this run posted. */
  fresh: ThroughputSchema,
  /** A hub on the same load whose log already held the large history when it started. */
  large: ThroughputSchema,
  /** fresh ÷ raw and large ÷ raw, as admission's `ratio`. */
  fresh_ratio: num,
  large_ratio: num,
  /** large ÷ fresh: below 1 by how much the large log slows admission. */
  large_vs_fresh: num,
  /** Envelopes fanned out to inboxes per second, from the first post until delivery caught up. */
  fresh_delivery_per_s: num,
  large_delivery_per_s: num,
});

/** Times to active of a hub started over a log: in a fresh process (cold JIT), then again in it (warm). */
const LogStartSchema = z.strictObject({
  wal_messages: count,
  cold_s: num,
  warm_s: num,
  /** CPU seconds each process used during the cold start (`hub`; `nats-server` when the bench started it). */
  cold_cpu_s: z.record(z.string(), num),
  /**
   * Channel records in the channels bucket, and reading them with one get per key (the host's `kvLoad`): how the
   * count of records alone weighs on NATS, not what the hub does (it reads the bucket in one streaming pass).
   */
  channel_records: count,
  kv_metadata_load_s: num,
});

export const LargeLogResultSchema = z.strictObject({
  /** The history written straight into the WAL before anything else. */
  history_messages: count,
  channels: count,
  open_channels: count,
  /** Envelopes in the open channels of the history: what a hub folds on its first start. */
  open_envelopes: count,
  write_s: num,
  write_per_s: num,
  /** The first hub on the history, in a fresh process, before any snapshot existed. */
  first_start_s: num,
  /** An ordered consumer replaying the history, as fast as it comes. */
  raw_replay_s: num,
  raw_replay_per_s: num,
  payload_bytes: count,
  agents: count,
  spread: LargeLogCaseSchema,
  hot: LargeLogCaseSchema,
  /** After the admission rounds: each hub stopped and started again over its log. */
  hydrate_fresh: LogStartSchema,
  hydrate_large: LogStartSchema,
  /** large ÷ fresh time to active, cold and warm: above 1 by how much the large log slows a start. */
  hydrate_cold_ratio: num,
  hydrate_warm_ratio: num,
});

/** Min, median and max of one figure over several runs. */
export const SpreadSchema = z.strictObject({ min: num, median: num, max: num });

/** One kill or pause of the active hub under load; times from the signal (SIGKILL, SIGSTOP), in ms. */
export const FailoverRunSchema = z.strictObject({
  /** Until the standby reported itself active (hydrated, subscribed), polled every 10 ms over IPC. */
  standby_active_ms: num,
  /** Until the first ack of a post sent after the signal (a probe or a loop's). */
  first_ack_ms: num,
  /** Until every loop had an ack of a post it sent after the signal: every channel flowing again. */
  resumed_ms: num,
  /** The longest post→ack (retries included) among the loops' posts acked after the signal. */
  max_latency_ms: num,
  /** Posts acked in the run (loops and probes); every one was found once in its channel's log. */
  acked: count,
  /** Posts whose retries ran out or that were refused for good; the scenario fails unless 0. */
  failed: count,
  /** Post→ack of the loops' posts acked in the window before the signal. */
  before: LatencySummarySchema,
  /** Post→ack of the loops' posts sent once every loop was flowing again (and a woken hub had stepped down). */
  after: LatencySummarySchema,
});

export const PauseRunSchema = FailoverRunSchema.extend({
  /** From SIGCONT until the woken hub reported itself a standby. */
  stepped_down_ms: num,
});

const FailoverEventSchema = z.strictObject({
  standby_active_ms: SpreadSchema,
  first_ack_ms: SpreadSchema,
  resumed_ms: SpreadSchema,
  max_latency_ms: SpreadSchema,
  failed_posts: count,
  runs: z.array(FailoverRunSchema),
});

export const FailoverResultSchema = z.strictObject({
  /** Conversation channels with a closed loop each (the probe posts in one more). */
  channels: count,
  /** Pause between a loop's ack and its next post. */
  pace_ms: num,
  /** The lease time of the hubs' lease bucket (hub-service's default). */
  lease_ttl_ms: num,
  /** How long one attempt of a loop's post waits before the client sends it again. */
  attempt_timeout_ms: num,
  /** A single-attempt probe post is sent this often. */
  probe_every_ms: num,
  /** How long the active hub stays paused (SIGSTOP → SIGCONT). */
  pause_ms: num,
  /** Posts acked over all runs, all found once in the logs at the end. */
  acked_posts: count,
  /** SIGKILL of the active host. */
  kill: FailoverEventSchema,
  /** SIGSTOP of the active host for `pause_ms`, then SIGCONT. */
  pause: FailoverEventSchema.extend({ stepped_down_ms: SpreadSchema, runs: z.array(PauseRunSchema) }),
});

/** One runner replica killed in the middle of a turn; times from the SIGKILL, in ms. */
export const RunnerTakeoverRunSchema = z.strictObject({
  /** Until the surviving replica started the turn again (its tool wrote that it started). */
  turn_started_ms: num,
  /** Until the survivor's answer was in the channel's log (read every 25 ms). */
  answered_ms: num,
});

export const RunnerTakeoverResultSchema = z.strictObject({
  /** The `ack_wait` of the agent's inbox consumer, as the hub set it at registration (hub-service's default). */
  inbox_ack_wait_ms: num,
  /** How long the turn's tool takes, part of `answered_ms`. */
  turn_ms: num,
  runs: z.array(RunnerTakeoverRunSchema).min(1),
  turn_started_ms: SpreadSchema,
  answered_ms: SpreadSchema,
});

/** One hub of an `instances` configuration, over the measurement windows. */
const InstanceHubSchema = z.strictObject({
  /** Partitions it served while measured. */
  partitions: count,
  /** Posts it acked inside the windows, and their share of all. */
  posts: count,
  share: num,
  /** Cores' worth of CPU it used (1 = one core busy). */
  core_share: num,
  /** Its CPU µs ÷ the envelopes it admitted. */
  us_per_env: num,
});

/** N hub instances on one prefix with P partitions, under admission's spread load. */
export const InstancesConfigSchema = z.strictObject({
  hubs: count,
  partitions: count,
  /** From the start of the channel setup until the hubs settled (every partition served once, each its fair share). */
  settle_ms: num,
  /** From the first hub active until then (the later hubs join it; a hand-over waits two lease times). */
  settled_after_ms: num,
  /** The baseline: the hub's appends, done directly over as many subjects, in the same rounds. */
  raw: ThroughputSchema,
  /** Posts acked; `cpu` by process (`hub-0`…, `nats-server`, `driver`), µs per admitted envelope of all hubs. */
  hub: ThroughputSchema,
  ratio: num,
  /** Envelopes fanned out to inboxes per second, from the first post until every partition's delivery caught up. */
  delivery_per_s: num,
  per_hub: z.array(InstanceHubSchema),
  /** CPU µs per admitted envelope: all hubs together, nats-server (0 with NATS_URL), the load generator. */
  cpu_us_per_env: z.strictObject({ hubs: num, nats_server: num, driver: num }),
  model: z.strictObject({
    /** Envelopes/s if each hub had a core of its own: the busiest hub's core full (1e6 ÷ (share × µs/env)). */
    core_per_hub_per_s: num,
    /** The same with the load spread evenly: hubs × 1e6 ÷ mean µs/env. */
    core_per_hub_even_per_s: num,
    /** Cores nats-server would use at `core_per_hub_per_s`, at its measured µs per envelope. */
    nats_cores_at_that_rate: num,
    /** What this machine admits if CPU is all that limits it: its cores × 1e6 ÷ every process's µs per envelope. */
    this_machine_per_s: num,
  }),
});

export const InstancesResultSchema = z.strictObject({
  partitions: count,
  channels: count,
  agents: count,
  /** The machine's cores: every process of every configuration shares them. */
  cores: count,
  /** Cores' worth of CPU the hubs of every configuration used together with no load (leases, presence, sweeps). */
  idle_hubs_core_share: num,
  /** One hub with one partition first (the reference), then each count of hubs on the partitioned prefix. */
  configs: z.array(InstancesConfigSchema).min(1),
});

/** A SIGKILL of one of several partitioned hubs under load; times from the signal, in ms. */
export const PartitionKillSchema = z.strictObject({
  hubs: count,
  /** Partitions the killed hub served. */
  partitions: z.array(count),
  /** Per partition of the killed hub (in `partitions`' order): until the first ack of a post sent after the signal. */
  first_ack_ms: z.array(num),
  first_ack_max_ms: num,
  /** Until the surviving hubs reported serving every partition of the killed one, polled every 20 ms over IPC. */
  taken_over_ms: num,
  /** Until the survivors settled on their fair shares, and how many of their own partitions moved between them. */
  settled_ms: num,
  moved_between_survivors: count,
  /** The longest post→ack (retries included) of a loop's post into a killed hub's partition, acked after the signal. */
  max_latency_ms: num,
  /** Post→ack of the loops posting into the other hubs' partitions: before the signal, and from it until recovery. */
  others_before: LatencySummarySchema,
  others_during: LatencySummarySchema,
  acked: count,
  failed: count,
});

/** A hub added under load to a partitioned prefix; times from its `startHub`, in ms. */
export const PartitionJoinSchema = z.strictObject({
  hubs_before: count,
  /** Partitions the new hub served once settled; partitions whose holder changed (to it, or between the others). */
  share: count,
  moved: count,
  /** Until it served its first partition (it must have been live two lease times first). */
  first_partition_ms: num,
  /** Until every partition was served once and each hub served its fair share (floor or ceil of P ÷ hubs). */
  settled_ms: num,
  /** The longest post→ack of a loop's post into a partition that moved. */
  max_latency_moved_ms: num,
  /** Post→ack of every loop: before the join, and from it until settled. */
  before: LatencySummarySchema,
  during: LatencySummarySchema,
  acked: count,
  failed: count,
});

export const PartitionFailoverResultSchema = z.strictObject({
  partitions: count,
  /** Loop channels per partition (one closed loop each) and the pause between a loop's ack and its next post. */
  channels_per_partition: count,
  pace_ms: num,
  /** One single-attempt probe post into one more channel of each partition, this often. */
  probe_every_ms: num,
  attempt_timeout_ms: num,
  lease_ttl_ms: num,
  /** From the first hub active until the first hubs settled on the assignment. */
  initial_settle_ms: num,
  kills: z.array(PartitionKillSchema),
  /** After each kill a fresh hub takes the dead one's place; then one more joins. */
  joins: z.array(PartitionJoinSchema),
  /** Posts acked over every event, each found once, gap-free, in its channel's log at the end. */
  acked_posts: count,
});

export const TargetSchema = z.strictObject({
  id: z.string(),
  description: z.string(),
  value: num,
  limit: num,
  comparison: z.enum(['>=', '<=', '<']),
  unit: z.string(),
  met: z.boolean(),
});

export const CodeSchema = z.strictObject({
  commit: z.string(),
  /** Tracked files outside bench/ that differ from the commit when the run started (empty for a clean tree). */
  changed_files: z.array(z.string()),
});

export const MachineSchema = z.strictObject({
  cpus: count,
  cpu_model: z.string(),
  total_memory_mb: count,
  platform: z.string(),
  arch: z.string(),
  node: z.string(),
  loadavg_start: z.array(num),
  loadavg_end: z.array(num),
});

const ScenariosSchema = z.strictObject({
  admission: AdmissionResultSchema,
  latency: LatencyResultSchema,
  fanout: FanoutResultSchema,
  hydrate: HydrateResultSchema,
  coldStart: ColdStartResultSchema,
  scale: ScaleResultSchema,
  largeLog: LargeLogResultSchema,
  failover: FailoverResultSchema,
  runnerTakeover: RunnerTakeoverResultSchema,
  instances: InstancesResultSchema,
  partitionFailover: PartitionFailoverResultSchema,
});

/** The nats-server one run of the scenarios measured. */
export const NatsServerFactsSchema = z.strictObject({
  /** The server's own version (`info.version` of the bench's connection), e.g. `2.15.1`. */
  version: z.string(),
  /** The binary the bench started, or the `NATS_URL` it was given. */
  binary: z.string(),
  /** `true` when the server was given (`NATS_URL`): its CPU is then not measured. */
  external: z.boolean(),
});

/** The scenarios run on one nats-server; every ratio in it is against raw NATS on that server. */
export const ServerRunSchema = z.strictObject({
  nats_server: NatsServerFactsSchema,
  started_at: z.string(),
  duration_s: num,
  scenarios: ScenariosSchema,
  targets: z.array(TargetSchema),
});

export const PartialServerRunSchema = ServerRunSchema.extend({ scenarios: ScenariosSchema.partial() });

/** A whole run: every scenario, on each server (`--servers`), in the order given. */
export const BenchResultsSchema = z.strictObject({
  schema_version: z.literal(2),
  mode: z.enum(['full', 'quick']),
  started_at: z.string(),
  duration_s: num,
  hub_placement: z.string(),
  code: CodeSchema,
  machine: MachineSchema,
  runs: z.array(ServerRunSchema).min(1),
});

/** A run of some scenarios (`--only`), written beside the full results, never over them. */
export const PartialBenchResultsSchema = BenchResultsSchema.extend({
  runs: z.array(PartialServerRunSchema).min(1),
});

export type LatencySummaryResult = z.infer<typeof LatencySummarySchema>;
export type Throughput = z.infer<typeof ThroughputSchema>;
export type AdmissionResult = z.infer<typeof AdmissionResultSchema>;
export type LatencyResult = z.infer<typeof LatencyResultSchema>;
export type FanoutResult = z.infer<typeof FanoutResultSchema>;
export type HydrateResult = z.infer<typeof HydrateResultSchema>;
export type ColdStartResult = z.infer<typeof ColdStartResultSchema>;
export type ScaleResult = z.infer<typeof ScaleResultSchema>;
export type LargeLogResult = z.infer<typeof LargeLogResultSchema>;
export type NatsServerFacts = z.infer<typeof NatsServerFactsSchema>;
export type PartialServerRun = z.infer<typeof PartialServerRunSchema>;
export type Spread = z.infer<typeof SpreadSchema>;
export type FailoverRunResult = z.infer<typeof FailoverRunSchema>;
export type PauseRunResult = z.infer<typeof PauseRunSchema>;
export type FailoverEventResult = z.infer<typeof FailoverEventSchema>;
export type FailoverResult = z.infer<typeof FailoverResultSchema>;
export type RunnerTakeoverRunResult = z.infer<typeof RunnerTakeoverRunSchema>;
export type RunnerTakeoverResult = z.infer<typeof RunnerTakeoverResultSchema>;
export type InstancesConfigResult = z.infer<typeof InstancesConfigSchema>;
export type InstancesResult = z.infer<typeof InstancesResultSchema>;
export type PartitionKillResult = z.infer<typeof PartitionKillSchema>;
export type PartitionJoinResult = z.infer<typeof PartitionJoinSchema>;
export type PartitionFailoverResult = z.infer<typeof PartitionFailoverResultSchema>;
export type Target = z.infer<typeof TargetSchema>;
export type Machine = z.infer<typeof MachineSchema>;
export type Code = z.infer<typeof CodeSchema>;
export type BenchResults = z.infer<typeof BenchResultsSchema>;
export type PartialBenchResults = z.infer<typeof PartialBenchResultsSchema>;
export type Scenarios = z.infer<typeof ScenariosSchema>;
export type Memory = z.infer<typeof MemorySchema>;
export type ScenarioName = keyof Scenarios;
export const SCENARIO_NAMES: readonly ScenarioName[] = [
  'admission',
  'latency',
  'fanout',
  'hydrate',
  'coldStart',
  'scale',
  'largeLog',
  'failover',
  'runnerTakeover',
  'instances',
  'partitionFailover',
];
