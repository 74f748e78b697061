import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { hubNames } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { CpuMeter } from '../cpu.js';
import { runClosedLoops, throughputOf, type ClosedLoopOptions, type LoopRun } from '../load/closed-loop.js';
import {
  closeMailboxes,
  mapLimit,
  openChannel,
  openMailboxes,
  pairFor,
  registerAgents,
  waitForConsumer,
  waitForDelivery,
} from '../load/network.js';
import { LeanPoster, storedPayload, textTemplate, type TextTemplate } from '../load/poster.js';
import { RawAppender, relayPost } from '../raw/appender.js';
import { createRawWal, rawNames } from '../raw/streams.js';
import type { AdmissionResult } from '../results.js';
import { ratio, round } from '../stats.js';
import type { ScenarioContext } from './context.js';
import { rotatingRounds, type RoundResults } from '../load/rotating-rounds.js';

/**
 * Admission throughput. Hub: closed-loop clients post `EV_TEXT` into open conversation channels and count acks —
 * spread over N channels (one post in flight per channel), and into one hot channel (several posts in flight, which
 * the hub serializes). Raw: the append the hub makes for each post — msg id, expected last subject sequence, the
 * hub's two headers, the same stored bytes — serialized per subject over the same number of subjects; a hot subject
 * can only have one append in flight, since each needs the sequence of the previous one. Relay: the hub's hops
 * without its logic (request → append → reply → fan-out to one inbox), in the hub's process.
 *
 * The three run in turn, several rounds, in a rotating order, so that the noise of the shared machine falls on all
 * of them alike; after each hub (and relay) run the bench waits until everything admitted was delivered, so that no
 * run pays for the previous one's backlog.
 */
export async function admission(ctx: ScenarioContext): Promise<AdmissionResult> {
  const s = ctx.sizes.admission;
  const prefix = ctx.prefix('adm');
  const names = hubNames(prefix);
  const host = await ctx.host('hub');
  await host.call('startHub', { servers: ctx.natsUrl, prefix });
  await host.call('startRelay', { servers: ctx.natsUrl, prefix });
  const rpc = ctx.rpc(prefix);

  ctx.log(`registering ${s.agents} agents and opening ${s.channels} conversations`);
  const agents = await registerAgents(rpc, 'adm', s.agents);
  const mailboxes = await openMailboxes(rpc, ctx.js, names, agents);
  const setupStart = performance.now();
  const channels = await mapLimit(
    Array.from({ length: s.channels }, (_, i) => pairFor(agents, i)),
    20,
    async (p) => {
      const id = await openChannel(rpc, { type: CONVERSATION_TYPE, creator: p.creator, invitees: [p.invitee] });
      return [textTemplate(id, p.creator), textTemplate(id, p.invitee)] as const;
    },
  );
  const setupSeconds = (performance.now() - setupStart) / 1000;
  // Recipients do not read during the runs; the hub still writes every delivery to their inboxes.
  await closeMailboxes(mailboxes.values());
  await waitForDelivery(ctx.jsm, names);

  const pick = (channel: number, side: number): TextTemplate => {
    const pair = channels[channel];
    if (pair === undefined) throw new Error(`no channel ${channel}`);
    return side % 2 === 0 ? pair[0] : pair[1];
  };
  const payload = storedPayload(pick(0, 0));
  const raw = rawNames(prefix);
  const appended = rawNames(ctx.prefix('app'));
  await createRawWal(ctx.jsm, appended);
  const appender = new RawAppender(ctx.js, appended, payload);
  const poster = new LeanPoster(ctx.nc, names);
  const post = (t: TextTemplate): Promise<void> => poster.post(t.envelope.sender_id, t.withId().body);
  const relayed = (channel: string, t: TextTemplate): Promise<void> => relayPost(ctx.nc, raw, channel, t);
  const base = {
    warmupMs: s.warmupMs,
    measureMs: s.measureMs,
    meter: new CpuMeter(ctx.natsPid, new Map([['hub', host]])),
  };
  const hubDrain = () => waitForDelivery(ctx.jsm, names);
  const relayDrain = () => waitForConsumer(ctx.jsm, raw.walStream, raw.relayConsumer);

  ctx.log(`${s.rounds} rounds × (raw appends, relay, hub) into ${s.channels} channels`);
  const spread = await rotatingRounds(s.rounds, {
    raw: () => runClosedLoops({ ...base, loops: s.channels, op: (i) => appender.append(`s${i}`) }),
    relay: () => drained(relayDrain, { ...base, loops: s.channels, op: (i) => relayed(`s${i}`, pick(i, 0)) }),
    hub: () => drained(hubDrain, { ...base, loops: s.channels, op: (i) => post(pick(i, 0)) }),
  });
  ctx.log(`${s.rounds} rounds × (raw, relay, hub) into one hot channel, hub ${s.hotInFlight} in flight`);
  const hot = await rotatingRounds(s.rounds, {
    raw: () => runClosedLoops({ ...base, loops: 1, op: () => appender.append('hot') }),
    relay: () => drained(relayDrain, { ...base, loops: s.hotInFlight, op: (i) => relayed('hot', pick(0, i)) }),
    hub: () => drained(hubDrain, { ...base, loops: s.hotInFlight, op: (i) => post(pick(0, i)) }),
  });

  return {
    payload_bytes: Buffer.byteLength(payload),
    agents: s.agents,
    setup_s: round(setupSeconds),
    spread: { channels: s.channels, ...summarizeCase(spread) },
    hot: { channels: 1, ...summarizeCase(hot) },
  };
}

/** A run after which the bench waits for the hub's (or relay's) delivery to catch up, timing that too. */
export interface DrainedRun {
  readonly run: LoopRun;
  /** From the start of the run until everything admitted in it was delivered, in s. */
  readonly untilDelivered: number;
}

/** Envelopes delivered per second over `runs`: everything they admitted, over the time until each was delivered. */
export function deliveryRateOf(runs: readonly DrainedRun[]): number {
  return round(runs.reduce((n, d) => n + d.run.total, 0) / runs.reduce((s, d) => s + d.untilDelivered, 0), 1);
}

export async function drained(drain: () => Promise<number>, options: ClosedLoopOptions): Promise<DrainedRun> {
  const started = performance.now();
  const run = await runClosedLoops(options);
  const caughtUp = await drain();
  return { run, untilDelivered: (caughtUp - started) / 1000 };
}

type Rounds = RoundResults<{
  readonly raw: () => Promise<LoopRun>;
  readonly relay: () => Promise<DrainedRun>;
  readonly hub: () => Promise<DrainedRun>;
}>;

function summarizeCase(r: Rounds): Omit<AdmissionResult['spread'], 'channels'> {
  const raw = throughputOf(r.raw);
  const relay = throughputOf(r.relay.map((d) => d.run));
  const hub = throughputOf(r.hub.map((d) => d.run));
  return {
    raw,
    relay,
    hub,
    ratio: ratio(hub.per_s, raw.per_s),
    relay_ratio: ratio(hub.per_s, relay.per_s),
    hub_delivery_per_s: deliveryRateOf(r.hub),
  };
}
