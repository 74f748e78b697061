import type { Scenarios, Target } from './results.js';

type Comparison = Target['comparison'];

function target(
  id: string,
  description: string,
  value: number,
  comparison: Comparison,
  limit: number,
  unit: string,
): Target {
  const met = comparison === '>=' ? value >= limit : comparison === '<=' ? value <= limit : value < limit;
  return { id, description, value, limit, comparison, unit, met };
}

/** The targets, evaluated on the scenarios that ran. */
export function evaluateTargets(s: Partial<Scenarios>): Target[] {
  const out: Target[] = [];
  if (s.admission !== undefined) {
    const a = s.admission;
    out.push(
      target(
        'admission_spread',
        `admission into ${a.spread.channels} channels, hub ÷ raw`,
        a.spread.ratio,
        '>=',
        0.5,
        '×',
      ),
      target('admission_hot', 'admission into 1 hot channel, hub ÷ raw', a.hot.ratio, '>=', 0.5, '×'),
    );
  }
  if (s.latency !== undefined) {
    out.push(
      target(
        'post_ack_p50',
        'post→ack p50 ÷ (request/reply + JS publish) p50',
        s.latency.ack_p50_ratio,
        '<=',
        2.5,
        '×',
      ),
    );
  }
  if (s.hydrate !== undefined) {
    out.push(target('hydrate', 'hydrate rate ÷ ordered-consumer replay rate', s.hydrate.ratio, '>=', 0.5, '×'));
  }
  if (s.coldStart !== undefined) {
    const c = s.coldStart;
    out.push(
      target(
        'cold_start',
        `a cold hub over ${c.wal_messages} WAL envelopes, ${c.open_channels} channels open, to active`,
        c.cold_start_s,
        '<',
        2,
        's',
      ),
      target(
        'cold_start_open_rate',
        'open envelopes hydrated per second ÷ raw replay rate',
        c.open_ratio,
        '>=',
        0.5,
        '×',
      ),
    );
  }
  if (s.scale !== undefined) {
    const c = s.scale;
    out.push(
      target('memory_per_channel', 'hub heap per idle channel', c.heap_per_channel_bytes, '<=', 4096, 'B'),
      target('sweeper_tick', `sweeper tick p50 over ${c.channels} channels`, c.tick.p50_ms, '<', 50, 'ms'),
    );
  }
  if (s.runnerTakeover !== undefined) {
    out.push(
      target(
        'runner_takeover',
        "a runner replica killed mid-turn: kill → the survivor's answer, slowest run",
        s.runnerTakeover.answered_ms.max,
        '<=',
        10_000,
        'ms',
      ),
    );
  }
  return out;
}
