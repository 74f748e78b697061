import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { hubNames, type HubNames } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { CpuMeter } from '../cpu.js';
import type { HostProcess } from '../host/client.js';
import { runClosedLoops, throughputOf, type LoopRun } from '../load/closed-loop.js';
import {
  closeMailboxes,
  mapLimit,
  openChannel,
  openMailboxes,
  pairFor,
  registerAgents,
  waitForDelivery,
} from '../load/network.js';
import { LeanPoster, storedPayload, textTemplate, type TextTemplate } from '../load/poster.js';
import { writeSyntheticHistory } from '../load/synthetic-history.js';
import { RawAppender } from '../raw/appender.js';
import { createRawWal, rawNames } from '../raw/streams.js';
import type { LargeLogResult } from '../results.js';
import { ratio, round } from '../stats.js';
import { deliveryRateOf, drained, type DrainedRun } from './admission.js';
import type { ScenarioContext } from './context.js';
import { rotatingRounds, type RoundResults } from '../load/rotating-rounds.js';

/**
 * Admission and hydrate on a large log already in place, against the same on a fresh log, in the same rounds.
 *
 * Setup: a history of `channels × envelopesPerChannel` envelopes (`open` channels still open, the rest ended) is
 * written straight into one hub's WAL with the hub's headers (`writeSyntheticHistory`); a hub in a fresh process
 * starts on it (no snapshots yet: it folds the open channels) and stays up. A second hub starts on an empty prefix.
 * On each, agents register and conversations open through the handshake, as in the admission scenario.
 *
 * Rounds: raw appends, the fresh hub and the large-log hub take turns in a rotating order (admission's sizes, spread
 * over its channels and into one hot channel), so that the shared machine's noise falls on all three alike. Then both
 * hubs stop and each is started again over its log, in a fresh process and again warm: hydrate on top of the log.
 */
export async function largeLog(ctx: ScenarioContext): Promise<LargeLogResult> {
  const s = ctx.sizes.largeLog;
  const a = ctx.sizes.admission;
  const largePrefix = ctx.prefix('big');
  const largeNames = hubNames(largePrefix);
  const provisioner = await ctx.host('provision');
  await provisioner.call('startHub', { servers: ctx.natsUrl, prefix: largePrefix });
  await provisioner.call('stopHub', {});
  await provisioner.close();

  const historyMessages = s.channels * s.envelopesPerChannel;
  ctx.log(`writing ${historyMessages} envelopes in ${s.channels} channels (${s.open} open) into the WAL`);
  const t0 = performance.now();
  const history = await writeSyntheticHistory(
    { nc: ctx.nc, jsm: ctx.jsm, names: largeNames },
    { openChannels: s.open, closedChannels: s.channels - s.open, envelopesPerChannel: s.envelopesPerChannel },
  );
  const writeSeconds = (performance.now() - t0) / 1000;
  ctx.log('raw ordered-consumer replay of the history');
  const replayer = await ctx.host('raw');
  const replay = await replayer.call('replay', { servers: ctx.natsUrl, stream: largeNames.walStream, decode: 'none' });
  await replayer.close();

  ctx.log('first hub on the history (fresh process, no snapshots), and a hub on a fresh log');
  const largeHost = await ctx.host('large');
  const { start_ms: firstStartMs } = await largeHost.call('startHub', { servers: ctx.natsUrl, prefix: largePrefix });
  const freshPrefix = ctx.prefix('fresh');
  const freshNames = hubNames(freshPrefix);
  const freshHost = await ctx.host('fresh');
  await freshHost.call('startHub', { servers: ctx.natsUrl, prefix: freshPrefix });

  ctx.log(`registering ${a.agents} agents and opening ${a.channels} conversations on each hub`);
  const freshPick = await conversations(ctx, freshPrefix, 'fr');
  const largePick = await conversations(ctx, largePrefix, 'lg');
  const payload = storedPayload(freshPick(0, 0));
  const appended = rawNames(ctx.prefix('app'));
  await createRawWal(ctx.jsm, appended);
  const appender = new RawAppender(ctx.js, appended, payload);
  const freshPoster = new LeanPoster(ctx.nc, freshNames);
  const largePoster = new LeanPoster(ctx.nc, largeNames);
  const window = { warmupMs: a.warmupMs, measureMs: a.measureMs };
  const freshMeter = new CpuMeter(ctx.natsPid, new Map([['hub', freshHost]]));
  const largeMeter = new CpuMeter(ctx.natsPid, new Map([['hub', largeHost]]));
  const hubRun = (
    hub: { readonly names: HubNames; readonly meter: CpuMeter },
    loops: number,
    op: (i: number) => Promise<void>,
  ) => drained(() => waitForDelivery(ctx.jsm, hub.names), { ...window, meter: hub.meter, loops, op });
  const freshHub = { names: freshNames, meter: freshMeter };
  const largeHub = { names: largeNames, meter: largeMeter };
  const post = (poster: LeanPoster, t: TextTemplate): Promise<void> =>
    poster.post(t.envelope.sender_id, t.withId().body);

  ctx.log(`${a.rounds} rounds × (raw appends, fresh hub, large-log hub) into ${a.channels} channels`);
  const spread = await rotatingRounds(a.rounds, {
    raw: () => runClosedLoops({ ...window, meter: freshMeter, loops: a.channels, op: (i) => appender.append(`s${i}`) }),
    fresh: () => hubRun(freshHub, a.channels, (i) => post(freshPoster, freshPick(i, 0))),
    large: () => hubRun(largeHub, a.channels, (i) => post(largePoster, largePick(i, 0))),
  });
  ctx.log(`${a.rounds} rounds × (raw, fresh hub, large-log hub) into one hot channel, ${a.hotInFlight} in flight`);
  const hot = await rotatingRounds(a.rounds, {
    raw: () => runClosedLoops({ ...window, meter: freshMeter, loops: 1, op: () => appender.append('hot') }),
    fresh: () => hubRun(freshHub, a.hotInFlight, (i) => post(freshPoster, freshPick(0, i))),
    large: () => hubRun(largeHub, a.hotInFlight, (i) => post(largePoster, largePick(0, i))),
  });

  ctx.log('hydrate on top: each hub stopped and started again over its log, fresh process then warm');
  await Promise.all([freshHost.call('stopHub', {}), largeHost.call('stopHub', {})]);
  await Promise.all([freshHost.close(), largeHost.close()]);
  const hydrateFresh = await restarted(ctx, freshPrefix, 'fresh-again');
  const hydrateLarge = await restarted(ctx, largePrefix, 'large-again');
  const spreadCase = summarize(spread);
  const hotCase = summarize(hot);
  return {
    history_messages: history.walMessages,
    channels: s.channels,
    open_channels: s.open,
    open_envelopes: s.open * s.envelopesPerChannel,
    write_s: round(writeSeconds),
    write_per_s: round(history.walMessages / writeSeconds, 1),
    first_start_s: round(firstStartMs / 1000),
    raw_replay_s: round(replay.seconds),
    raw_replay_per_s: round(replay.messages / replay.seconds, 1),
    payload_bytes: Buffer.byteLength(payload),
    agents: a.agents,
    spread: { channels: a.channels, ...spreadCase },
    hot: { channels: 1, ...hotCase },
    hydrate_fresh: hydrateFresh,
    hydrate_large: hydrateLarge,
    hydrate_cold_ratio: ratio(hydrateLarge.cold_s, hydrateFresh.cold_s),
    hydrate_warm_ratio: ratio(hydrateLarge.warm_s, hydrateFresh.warm_s),
  };
}

/** Registers agents and opens admission's conversations on the hub of `prefix`; picks a channel's side to post as. */
async function conversations(
  ctx: ScenarioContext,
  prefix: string,
  label: string,
): Promise<(channel: number, side: number) => TextTemplate> {
  const a = ctx.sizes.admission;
  const names = hubNames(prefix);
  const rpc = ctx.rpc(prefix);
  const agents = await registerAgents(rpc, label, a.agents);
  const mailboxes = await openMailboxes(rpc, ctx.js, names, agents);
  const channels = await mapLimit(
    Array.from({ length: a.channels }, (_, i) => pairFor(agents, i)),
    20,
    async (p) => {
      const id = await openChannel(rpc, { type: CONVERSATION_TYPE, creator: p.creator, invitees: [p.invitee] });
      return [textTemplate(id, p.creator), textTemplate(id, p.invitee)] as const;
    },
  );
  // Recipients do not read during the runs; the hub still writes every delivery to their inboxes.
  await closeMailboxes(mailboxes.values());
  await waitForDelivery(ctx.jsm, names);
  return (channel, side) => {
    const pair = channels[channel];
    if (pair === undefined) throw new Error(`no channel ${channel}`);
    return side % 2 === 0 ? pair[0] : pair[1];
  };
}

type Rotated = RoundResults<{
  readonly raw: () => Promise<LoopRun>;
  readonly fresh: () => Promise<DrainedRun>;
  readonly large: () => Promise<DrainedRun>;
}>;

function summarize(r: Rotated): Omit<LargeLogResult['spread'], 'channels'> {
  const raw = throughputOf(r.raw);
  const fresh = throughputOf(r.fresh.map((d) => d.run));
  const large = throughputOf(r.large.map((d) => d.run));
  return {
    raw,
    fresh,
    large,
    fresh_ratio: ratio(fresh.per_s, raw.per_s),
    large_ratio: ratio(large.per_s, raw.per_s),
    large_vs_fresh: ratio(large.per_s, fresh.per_s),
    fresh_delivery_per_s: deliveryRateOf(r.fresh),
    large_delivery_per_s: deliveryRateOf(r.large),
  };
}

/**
 * A hub started over `prefix` in a fresh process (cold JIT), stopped, and started again in it (warm JIT); the CPU
 * of the cold start, and then how long reading the channels bucket takes on its own.
 */
async function restarted(
  ctx: ScenarioContext,
  prefix: string,
  label: string,
): Promise<LargeLogResult['hydrate_fresh']> {
  const names = hubNames(prefix);
  const walMessages = (await ctx.jsm.streams.info(names.walStream)).state.messages;
  const host: HostProcess = await ctx.host(label);
  const meter = new CpuMeter(ctx.natsPid, new Map([['hub', host]]));
  const startedIn = async (): Promise<number> => {
    const { start_ms: ms } = await host.call('startHub', { servers: ctx.natsUrl, prefix });
    await host.call('stopHub', {});
    return round(ms / 1000);
  };
  const before = await meter.snapshot();
  const cold = await startedIn();
  const after = await meter.snapshot();
  const warm = await startedIn();
  const kv = await host.call('kvLoad', { servers: ctx.natsUrl, bucket: names.channelsBucket });
  await host.close();
  const coldCpu: Record<string, number> = {};
  for (const [name, end] of after) {
    const start = before.get(name);
    if (start !== undefined && name !== 'driver') coldCpu[name] = round(end - start);
  }
  return {
    wal_messages: walMessages,
    cold_s: cold,
    warm_s: warm,
    cold_cpu_s: coldCpu,
    channel_records: kv.keys,
    kv_metadata_load_s: round(kv.seconds),
  };
}
