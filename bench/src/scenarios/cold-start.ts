import { hubNames } from '@ag2net/protocol';
import { writeSyntheticHistory } from '../load/synthetic-history.js';
import type { ColdStartResult } from '../results.js';
import { ratio, round } from '../stats.js';
import type { ScenarioContext } from './context.js';

/**
 * Cold start over a large history: a WAL of N envelopes (the issue: 1,000,000) in channels of which M are open (the
 * issue: 1,000), written straight into the hub's streams with the hub's headers (`writeSyntheticHistory`), not
 * through a hub, so that the setup takes seconds, not hours. Then:
 *
 * 1. a hub in a fresh process starts on it with no snapshots: it folds the open channels from the log (one pass
 *    from the oldest entry they need; ended channels are not folded) and writes their snapshots;
 * 2. a hub in another fresh process starts on it (cold JIT, as after a crash): the headline figure, time from
 *    `startHub` to active — it restores the open channels from their snapshots and reads only their tails;
 * 3. the same again in that process (warm JIT).
 *
 * Baseline: an ordered consumer replaying the whole WAL as fast as it comes, the cost any hydrate that folded the
 * history would have. "Open envelopes" are the envelopes in the open channels: what the live state of the hub is
 * the fold of.
 */
export async function coldStart(ctx: ScenarioContext): Promise<ColdStartResult> {
  const s = ctx.sizes.coldStart;
  const prefix = ctx.prefix('cold');
  const names = hubNames(prefix);
  const perChannel = Math.ceil(s.envelopes / s.channels);
  const provisioner = await ctx.host('provision');
  await provisioner.call('startHub', { servers: ctx.natsUrl, prefix });
  await provisioner.call('stopHub', {});
  await provisioner.close();

  ctx.log(`writing ${s.channels * perChannel} envelopes in ${s.channels} channels (${s.open} open) into the WAL`);
  const t0 = performance.now();
  const history = await writeSyntheticHistory(
    { nc: ctx.nc, jsm: ctx.jsm, names },
    { openChannels: s.open, closedChannels: s.channels - s.open, envelopesPerChannel: perChannel },
  );
  const writeSeconds = (performance.now() - t0) / 1000;
  const openEnvelopes = s.open * perChannel;

  ctx.log('first hub, no snapshots yet, fresh process');
  const first = await ctx.host('first');
  const unsnapshotted = await startedIn(first, ctx.natsUrl, prefix);
  await first.close();
  ctx.log('hub over snapshots, fresh process then warm');
  const hub = await ctx.host('hub');
  const cold = await startedIn(hub, ctx.natsUrl, prefix);
  const warm = await startedIn(hub, ctx.natsUrl, prefix);
  await hub.close();

  ctx.log('raw ordered-consumer replay of the whole WAL');
  const raw = await ctx.host('raw');
  const replay = await raw.call('replay', { servers: ctx.natsUrl, stream: names.walStream, decode: 'none' });
  const rawPerS = history.walMessages / replay.seconds;
  const openPerS = (seconds: number) => round(openEnvelopes / seconds, 1);
  return {
    wal_messages: history.walMessages,
    channels: s.channels,
    open_channels: s.open,
    open_envelopes: openEnvelopes,
    write_s: round(writeSeconds),
    first_start_s: round(unsnapshotted),
    first_open_per_s: openPerS(unsnapshotted),
    cold_start_s: round(cold),
    warm_start_s: round(warm),
    cold_open_per_s: openPerS(cold),
    raw_replay_s: round(replay.seconds),
    raw_replay_per_s: round(rawPerS, 1),
    open_ratio: ratio(openEnvelopes / cold, rawPerS),
    first_open_ratio: ratio(openEnvelopes / unsnapshotted, rawPerS),
  };
}

/** Starts a hub in `host` over `prefix`, stops it again (writing snapshots, releasing the lease): seconds to active. */
async function startedIn(
  host: Awaited<ReturnType<ScenarioContext['host']>>,
  servers: string,
  prefix: string,
): Promise<number> {
  const { start_ms: ms } = await host.call('startHub', { servers, prefix });
  await host.call('stopHub', {});
  return ms / 1000;
}
