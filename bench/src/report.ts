import type {
  FailoverEventResult,
  FailoverRunResult,
  InstancesResult,
  LargeLogResult,
  PartitionFailoverResult,
  PartialBenchResults,
  PartialServerRun,
  Spread,
  Target,
  Throughput,
} from './results.js';
import { median } from './stats.js';

type Row = readonly [what: string, raw: string, hub: string, ratio: string, target: string];

const rate = (n: number): string => `${Math.round(n).toLocaleString('en-US')}/s`;
const ms = (n: number): string => `${n.toFixed(2)} ms`;
const times = (n: number): string => `${n.toFixed(2)}×`;
const bytes = (n: number): string => `${Math.round(n).toLocaleString('en-US')} B`;
const seconds = (n: number): string => `${(n / 1000).toFixed(2)} s`;
const spread = (x: Spread): string => `${seconds(x.min)} / ${seconds(x.median)} / ${seconds(x.max)}`;

const HEADER: Row = ['Scenario', 'Raw NATS', 'Hub', 'Hub ÷ raw', 'Target'];

/**
 * The results as a Markdown table (it reads as well in a terminal as in docs/performance.md). With one server, one
 * column each for raw, hub and ratio; with several, those three columns once per server, in the order they ran.
 */
export function formatTable(results: PartialBenchResults): string {
  const perRun = results.runs.map(rowsOf);
  const [first] = perRun;
  if (first === undefined) return markdown(HEADER, []);
  if (perRun.length === 1) return markdown(HEADER, first);
  const header = [
    'Scenario',
    ...results.runs.flatMap((r) => {
      const v = r.nats_server.version;
      return [`Raw NATS ${v}`, `Hub ${v}`, `Hub ÷ raw ${v}`];
    }),
    'Target',
  ];
  const rows = first.map((row, i) => {
    const cells = perRun.map((rows) => rows[i]);
    const targets = [...new Set(cells.map((c) => c?.[4] ?? ''))];
    return [
      row[0],
      ...cells.flatMap((c) => [c?.[1] ?? '', c?.[2] ?? '', c?.[3] ?? '']),
      targets.length === 1 ? (targets[0] ?? '') : cells.map((c) => c?.[4] ?? '').join(' · '),
    ];
  });
  return markdown(header, rows);
}

/** One server's rows: scenario, raw figure, hub figure, ratio, target. */
function rowsOf(run: PartialServerRun): Row[] {
  const s = run.scenarios;
  const met = (id: string): string => verdict(run.targets.find((t) => t.id === id));
  const rows: Row[] = [];
  if (s.admission !== undefined) {
    const { spread, hot } = s.admission;
    rows.push(
      [
        `Admission, ${spread.channels} channels, 1 in flight each (env/s)`,
        rate(spread.raw.per_s),
        rate(spread.hub.per_s),
        times(spread.ratio),
        `≥ 0.5× ${met('admission_spread')}`,
      ],
      [
        `Admission, 1 hot channel, hub ${hot.hub.in_flight} in flight / raw 1 (env/s)`,
        rate(hot.raw.per_s),
        rate(hot.hub.per_s),
        times(hot.ratio),
        `≥ 0.5× ${met('admission_hot')}`,
      ],
      [
        '… raw relay (request → append → reply → fan-out, no hub logic): env/s; hub ÷ relay',
        `${rate(spread.relay.per_s)}; ${rate(hot.relay.per_s)}`,
        '',
        `${times(spread.relay_ratio)}; ${times(hot.relay_ratio)}`,
        '',
      ],
      [
        `… latency p50 / p99 under that load (raw: append; hub: post→ack; ${spread.channels} ch, hot)`,
        `${ms(spread.raw.latency.p50_ms)} / ${ms(spread.raw.latency.p99_ms)}`,
        `${ms(spread.hub.latency.p50_ms)} / ${ms(spread.hub.latency.p99_ms)}; ${ms(hot.hub.latency.p50_ms)} / ${ms(hot.hub.latency.p99_ms)}`,
        '',
        '',
      ],
      [
        '… hub delivery to inboxes until caught up (env/s; spread, hot)',
        '',
        `${rate(spread.hub_delivery_per_s)}; ${rate(hot.hub_delivery_per_s)}`,
        '',
        '',
      ],
    );
  }
  if (s.latency !== undefined) {
    const l = s.latency;
    rows.push(
      [
        'Post→ack p50 (raw: request/reply + JS publish)',
        `${ms(l.raw_sum_p50_ms)} (${ms(l.request_reply.p50_ms)} + ${ms(l.js_publish.p50_ms)})`,
        ms(l.hub_ack.p50_ms),
        times(l.ack_p50_ratio),
        `≤ 2.5× ${met('post_ack_p50')}`,
      ],
      ['Post→ack p99 (same baseline)', ms(l.raw_sum_p99_ms), ms(l.hub_ack.p99_ms), times(l.ack_p99_ratio), ''],
      [
        'Post→delivery p50 / p99 (raw: relay, same hops)',
        `${ms(l.raw_pipeline_delivery.p50_ms)} / ${ms(l.raw_pipeline_delivery.p99_ms)}`,
        `${ms(l.hub_delivery.p50_ms)} / ${ms(l.hub_delivery.p99_ms)}`,
        `${times(l.delivery_p50_ratio)} / ${times(l.delivery_p99_ratio)}`,
        '',
      ],
    );
  }
  if (s.fanout !== undefined) {
    const f = s.fanout;
    rows.push([
      `Fan-out, ${f.participants}-party discussion, post→all ${f.participants - 1} have it, p50 / p99`,
      `${ms(f.raw_all.p50_ms)} / ${ms(f.raw_all.p99_ms)}`,
      `${ms(f.hub_all.p50_ms)} / ${ms(f.hub_all.p99_ms)}`,
      `${times(f.all_p50_ratio)} / ${times(f.all_p99_ratio)}`,
      '',
    ]);
  }
  if (s.hydrate !== undefined) {
    const h = s.hydrate;
    rows.push(
      [
        `Hydrate, ${h.wal_messages.toLocaleString('en-US')} WAL msgs in ${h.channels.toLocaleString('en-US')} channels (env/s)`,
        rate(h.raw_warm.per_s),
        `${rate(h.hub_warm.per_s)} (${h.hub_warm.seconds.toFixed(2)} s)`,
        times(h.ratio),
        `≥ 0.5× ${met('hydrate')}`,
      ],
      [
        '… replay + JSON.parse; + EnvelopeSchema.parse (components); KV metadata load',
        `${rate(h.replay_json.per_s)}; ${rate(h.replay_schema.per_s)}; ${h.kv_metadata_load_s.toFixed(2)} s`,
        '',
        '',
        '',
      ],
      [
        '… same, first run in a fresh process (cold JIT)',
        rate(h.raw_first.per_s),
        `${rate(h.hub_first.per_s)} (${h.hub_first.seconds.toFixed(2)} s)`,
        times(h.ratio_first),
        '',
      ],
    );
  }
  if (s.coldStart !== undefined) {
    const c = s.coldStart;
    const n = (v: number) => v.toLocaleString('en-US');
    rows.push(
      [
        `Cold start, ${n(c.wal_messages)} WAL msgs, ${n(c.open_channels)} of ${n(c.channels)} channels open (open env/s)`,
        rate(c.raw_replay_per_s),
        `${rate(c.cold_open_per_s)} (${c.cold_start_s.toFixed(2)} s to active; warm ${c.warm_start_s.toFixed(2)} s)`,
        times(c.open_ratio),
        `< 2 s ${met('cold_start')}; ≥ 0.5× ${met('cold_start_open_rate')}`,
      ],
      [
        '… first start, no snapshots yet (folds open channels from the log)',
        `${c.raw_replay_s.toFixed(2)} s`,
        `${rate(c.first_open_per_s)} (${c.first_start_s.toFixed(2)} s)`,
        times(c.first_open_ratio),
        '',
      ],
    );
  }
  if (s.scale !== undefined) {
    const c = s.scale;
    rows.push(
      [
        `Hub heap per idle channel (${c.channels.toLocaleString('en-US')} channels, ${c.agents.toLocaleString('en-US')} agents)`,
        '',
        `${bytes(c.heap_per_channel_bytes)} (RSS ${bytes(c.rss_per_channel_bytes)})`,
        '',
        `≤ 4,096 B ${met('memory_per_channel')}`,
      ],
      [
        `Sweeper tick over ${c.channels.toLocaleString('en-US')} channels, p50 / max`,
        '',
        `${ms(c.tick.p50_ms)} / ${ms(c.tick.max_ms)}`,
        '',
        `< 50 ms ${met('sweeper_tick')}`,
      ],
      [
        'Setup: register agents; open channels through the handshake',
        '',
        `${(c.agents / c.register_s).toFixed(0)}/s; ${rate(c.create_per_s)}`,
        '',
        '',
      ],
    );
  }
  if (s.largeLog !== undefined) rows.push(...largeLogRows(s.largeLog));
  if (s.failover !== undefined) {
    const f = s.failover;
    rows.push(
      [
        `Failover, SIGKILL of the active hub (lease ${seconds(f.lease_ttl_ms)}): kill → first ack, min / median / max`,
        '',
        spread(f.kill.first_ack_ms),
        '',
        '',
      ],
      ...eventRows(f.kill, `retries after ${seconds(f.attempt_timeout_ms)} without an answer`),
      [
        `Failover, SIGSTOP for ${seconds(f.pause_ms)}, then SIGCONT: stop → first ack, min / median / max`,
        '',
        spread(f.pause.first_ack_ms),
        '',
        '',
      ],
      ...eventRows(f.pause, 'same client'),
      ['… SIGCONT → the woken hub a standby, min / median / max', '', spread(f.pause.stepped_down_ms), '', ''],
      [
        `… posts failed; acked posts found once, gap-free, in the logs (${f.kill.runs.length} kills, ${f.pause.runs.length} pauses)`,
        '',
        `${f.kill.failed_posts + f.pause.failed_posts}; ${f.acked_posts.toLocaleString('en-US')}`,
        '',
        '',
      ],
    );
  }
  if (s.runnerTakeover !== undefined) {
    const t = s.runnerTakeover;
    rows.push(
      [
        `Runner replica killed mid-turn (inbox ack wait ${seconds(t.inbox_ack_wait_ms)}): kill → survivor's answer, min / median / max`,
        '',
        spread(t.answered_ms),
        '',
        `≤ 10 s ${met('runner_takeover')}`,
      ],
      [
        `… kill → the survivor starts the turn again (the turn then takes ${seconds(t.turn_ms)}; ${t.runs.length} kills)`,
        '',
        spread(t.turn_started_ms),
        '',
        '',
      ],
    );
  }
  if (s.instances !== undefined) rows.push(...instancesRows(s.instances));
  if (s.partitionFailover !== undefined) rows.push(...partitionFailoverRows(s.partitionFailover));
  return rows;
}

/** Hub instances: each configuration's rate and ratio, how it spread, its CPU, and the model. */
function instancesRows(x: InstancesResult): Row[] {
  const rows: Row[] = [];
  const reference = x.configs[0]?.hub.per_s ?? 0;
  for (const c of x.configs) {
    const label = `${c.hubs} hub${c.hubs === 1 ? '' : 's'}, ${c.partitions} partition${c.partitions === 1 ? '' : 's'}`;
    const pct = (v: number): string => `${Math.round(v * 100)} %`;
    rows.push(
      [
        `Instances: ${label}, ${x.channels} channels, 1 in flight each (env/s; × the 1-hub, 1-partition rate)`,
        rate(c.raw.per_s),
        `${rate(c.hub.per_s)} (${times(reference === 0 ? 0 : c.hub.per_s / reference)})`,
        times(c.ratio),
        '',
      ],
      [
        '… per hub: partitions; share of posts; CPU µs per own envelope (cores busy)',
        '',
        c.per_hub
          .map((h) => `${h.partitions}; ${pct(h.share)}; ${h.us_per_env} (${h.core_share.toFixed(2)})`)
          .join(' · '),
        '',
        '',
      ],
      [
        '… CPU µs per envelope: all hubs; nats-server; load generator — model: a core per hub; this machine',
        '',
        `${c.cpu_us_per_env.hubs}; ${c.cpu_us_per_env.nats_server}; ${c.cpu_us_per_env.driver} — ${rate(c.model.core_per_hub_per_s)} (+ ${c.model.nats_cores_at_that_rate.toFixed(2)} nats-server cores); ${rate(c.model.this_machine_per_s)} on ${x.cores} cores`,
        '',
        '',
      ],
    );
  }
  return rows;
}

/** Failover with partitions: each kill and each join under load. */
function partitionFailoverRows(x: PartitionFailoverResult): Row[] {
  const rows: Row[] = [];
  for (const k of x.kills) {
    rows.push(
      [
        `Partitions (${x.partitions}): SIGKILL of 1 of ${k.hubs} hubs under load: → each of its ${k.partitions.length} partitions acks again, max; taken over; settled`,
        '',
        `${seconds(k.first_ack_max_ms)}; ${seconds(k.taken_over_ms)}; ${seconds(k.settled_ms)}`,
        '',
        '',
      ],
      [
        '… the other hubs’ post→ack p99 before → during; failed posts',
        '',
        `${ms(k.others_before.p99_ms)} → ${ms(k.others_during.p99_ms)}; ${k.failed}`,
        '',
        '',
      ],
    );
  }
  for (const j of x.joins) {
    rows.push([
      `Partitions: hub ${j.hubs_before + 1} joins under load: first partition; settled (${j.moved} moved); longest post→ack in them; failed`,
      '',
      `${seconds(j.first_partition_ms)}; ${seconds(j.settled_ms)}; ${ms(j.max_latency_moved_ms)}; ${j.failed}`,
      '',
      '',
    ]);
  }
  rows.push([
    '… acked posts, all found once, gap-free, in the logs',
    '',
    x.acked_posts.toLocaleString('en-US'),
    '',
    '',
  ]);
  return rows;
}

const startCpu = (start: LargeLogResult['hydrate_fresh'], name: string): string =>
  start.cold_cpu_s[name]?.toFixed(2) ?? '–';

/** The large-log scenario: each figure on the fresh log → on the large log, and how far it fell. */
function largeLogRows(l: LargeLogResult): Row[] {
  const n = (v: number): string => v.toLocaleString('en-US');
  const change = (ratioValue: number): string =>
    `${ratioValue >= 1 ? '+' : ''}${((ratioValue - 1) * 100).toFixed(0)} %`;
  const cpu = (t: Throughput, name: string): string => String(t.cpu[name]?.us_per_op ?? '–');
  const admissionRow = (label: string, c: LargeLogResult['spread']): Row => [
    label,
    rate(c.raw.per_s),
    `${rate(c.fresh.per_s)} → ${rate(c.large.per_s)} (${change(c.large_vs_fresh)})`,
    `${times(c.fresh_ratio)} → ${times(c.large_ratio)}`,
    '',
  ];
  return [
    [
      `Large log: ${n(l.history_messages)} WAL msgs written straight in (${n(l.channels)} channels, ${n(l.open_channels)} open): raw replay; first hub start, no snapshots`,
      `${rate(l.raw_replay_per_s)} (${l.raw_replay_s.toFixed(2)} s)`,
      `${l.first_start_s.toFixed(2)} s (${rate(l.open_envelopes / l.first_start_s)} open env)`,
      '',
      '',
    ],
    admissionRow(`… admission, ${l.spread.channels} channels, fresh log → large log (env/s)`, l.spread),
    admissionRow(`… admission, 1 hot channel, hub ${l.hot.large.in_flight} in flight, fresh → large (env/s)`, l.hot),
    [
      '… post→ack p50 / p99, fresh → large (spread; hot)',
      '',
      `${ms(l.spread.fresh.latency.p50_ms)} / ${ms(l.spread.fresh.latency.p99_ms)} → ${ms(l.spread.large.latency.p50_ms)} / ${ms(l.spread.large.latency.p99_ms)}; ${ms(l.hot.fresh.latency.p50_ms)} / ${ms(l.hot.fresh.latency.p99_ms)} → ${ms(l.hot.large.latency.p50_ms)} / ${ms(l.hot.large.latency.p99_ms)}`,
      '',
      '',
    ],
    [
      '… CPU µs per admitted envelope, fresh → large: hub; nats-server (spread; hot)',
      `raw nats-server ${cpu(l.spread.raw, 'nats-server')}; ${cpu(l.hot.raw, 'nats-server')}`,
      `hub ${cpu(l.spread.fresh, 'hub')} → ${cpu(l.spread.large, 'hub')}; ${cpu(l.hot.fresh, 'hub')} → ${cpu(l.hot.large, 'hub')}; nats-server ${cpu(l.spread.fresh, 'nats-server')} → ${cpu(l.spread.large, 'nats-server')}; ${cpu(l.hot.fresh, 'nats-server')} → ${cpu(l.hot.large, 'nats-server')}`,
      '',
      '',
    ],
    [
      '… hub delivery to inboxes until caught up, fresh → large (env/s; spread, hot)',
      '',
      `${rate(l.spread.fresh_delivery_per_s)} → ${rate(l.spread.large_delivery_per_s)}; ${rate(l.hot.fresh_delivery_per_s)} → ${rate(l.hot.large_delivery_per_s)}`,
      '',
      '',
    ],
    [
      `… hydrate after the rounds, to active, fresh process / warm: fresh log (${n(l.hydrate_fresh.wal_messages)} msgs) → large (${n(l.hydrate_large.wal_messages)})`,
      '',
      `${l.hydrate_fresh.cold_s.toFixed(2)} / ${l.hydrate_fresh.warm_s.toFixed(2)} s → ${l.hydrate_large.cold_s.toFixed(2)} / ${l.hydrate_large.warm_s.toFixed(2)} s`,
      `${times(l.hydrate_cold_ratio)} / ${times(l.hydrate_warm_ratio)}`,
      '',
    ],
    [
      '… that cold start: CPU s of hub; nats-server; channel records, read one get each (fresh → large)',
      '',
      `${startCpu(l.hydrate_fresh, 'hub')} → ${startCpu(l.hydrate_large, 'hub')}; ${startCpu(l.hydrate_fresh, 'nats-server')} → ${startCpu(l.hydrate_large, 'nats-server')}; ${n(l.hydrate_fresh.channel_records)} in ${l.hydrate_fresh.kv_metadata_load_s.toFixed(2)} s → ${n(l.hydrate_large.channel_records)} in ${l.hydrate_large.kv_metadata_load_s.toFixed(2)} s`,
      '',
      '',
    ],
  ];
}

/** A failover event's rows after its first: recovery of every loop, the worst wait, post→ack before and after. */
function eventRows(e: FailoverEventResult, client: string): Row[] {
  const p = (pick: (r: FailoverRunResult) => number): string => ms(median(e.runs.map(pick)));
  return [
    [
      '… signal → the standby active (hydrated, subscribed), min / median / max',
      '',
      spread(e.standby_active_ms),
      '',
      '',
    ],
    [
      `… until every loop had an ack again; longest post→ack (${client})`,
      '',
      `${spread(e.resumed_ms)}; ${spread(e.max_latency_ms)}`,
      '',
      '',
    ],
    [
      '… post→ack p50 / p99 before; after (medians over the runs)',
      '',
      `${p((r) => r.before.p50_ms)} / ${p((r) => r.before.p99_ms)}; ${p((r) => r.after.p50_ms)} / ${p((r) => r.after.p99_ms)}`,
      '',
      '',
    ],
  ];
}

function verdict(t: Target | undefined): string {
  if (t === undefined) return '';
  return t.met ? '✅' : '❌';
}

function markdown(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => [...(r[c] ?? '')].length)));
  const line = (r: readonly string[]): string => `| ${r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A one-paragraph description of the machine and the run. */
export function formatMachine(results: PartialBenchResults): string {
  const m = results.machine;
  const servers = results.runs.map(
    (r) =>
      `nats-server ${r.nats_server.version} (${r.nats_server.external ? 'NATS_URL' : r.nats_server.binary}, ${r.duration_s.toFixed(0)} s)`,
  );
  return [
    `${results.mode} run, ${results.started_at}, ${results.duration_s.toFixed(0)} s`,
    `${m.cpus} × ${m.cpu_model}, ${m.total_memory_mb.toLocaleString('en-US')} MB RAM, ${m.platform}/${m.arch}`,
    `Node ${m.node}; ${servers.join('; ')}`,
    `load average at start ${m.loadavg_start.map((n) => n.toFixed(2)).join(' ')}, at end ${m.loadavg_end.map((n) => n.toFixed(2)).join(' ')}`,
    `code: ${results.code.commit.slice(0, 12)}${results.code.changed_files.length === 0 ? '' : ` + ${results.code.changed_files.length} changed files`}`,
    `hub: ${results.hub_placement}`,
  ].join('\n');
}
