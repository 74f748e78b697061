import type { FailoverEventResult, FailoverRunResult, PartialBenchResults, Spread, Target } from './results.js';
import { median } from './stats.js';

type Row = readonly [what: string, raw: string, hub: string, ratio: string, target: string];

const rate = (n: number): string => `${Math.round(n).toLocaleString('en-US')}/s`;
const ms = (n: number): string => `${n.toFixed(2)} ms`;
const times = (n: number): string => `${n.toFixed(2)}×`;
const bytes = (n: number): string => `${Math.round(n).toLocaleString('en-US')} B`;
const seconds = (n: number): string => `${(n / 1000).toFixed(2)} s`;
const spread = (x: Spread): string => `${seconds(x.min)} / ${seconds(x.median)} / ${seconds(x.max)}`;

/** The results as a Markdown table (it reads as well in a terminal as in docs/performance.md). */
export function formatTable(results: PartialBenchResults): string {
  const s = results.scenarios;
  const met = (id: string): string => verdict(results.targets.find((t) => t.id === id));
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
  return markdown(['Scenario', 'Raw NATS', 'Hub', 'Hub ÷ raw', 'Target'], rows);
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

function markdown(header: Row, rows: readonly Row[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => [...(r[c] ?? '')].length)));
  const line = (r: Row): string => `| ${r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A one-paragraph description of the machine and the run. */
export function formatMachine(results: PartialBenchResults): string {
  const m = results.machine;
  return [
    `${results.mode} run, ${results.started_at}, ${results.duration_s.toFixed(0)} s`,
    `${m.cpus} × ${m.cpu_model}, ${m.total_memory_mb.toLocaleString('en-US')} MB RAM, ${m.platform}/${m.arch}`,
    `Node ${m.node}, nats-server ${m.nats_server}${m.nats_external ? ' (NATS_URL)' : ' (started by the bench)'}`,
    `load average at start ${m.loadavg_start.map((n) => n.toFixed(2)).join(' ')}, at end ${m.loadavg_end.map((n) => n.toFixed(2)).join(' ')}`,
    `code: ${results.code.commit.slice(0, 12)}${results.code.changed_files.length === 0 ? '' : ` + ${results.code.changed_files.length} changed files`}`,
    `hub: ${results.hub_placement}`,
  ].join('\n');
}
