import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { hubNames } from '@ag2net/protocol';
import type { HostProcess } from '../host/client.js';
import { runCounted } from '../load/closed-loop.js';
import {
  closeMailboxes,
  mapLimit,
  openChannel,
  openMailboxes,
  pairFor,
  registerAgents,
  waitForDelivery,
} from '../load/network.js';
import { LeanPoster, textTemplate } from '../load/poster.js';
import type { HydrateResult } from '../results.js';
import { ratio, round } from '../stats.js';
import type { ScenarioContext } from './context.js';

/**
 * Hydrate: a hub started cold over a WAL of N envelopes in M channels, seeded through the hub itself (handshakes
 * and posts over the RPC, every channel posting at once). The figure is the time from `startHub` to active —
 * provision, lease, registry and channel metadata from KV, one pass over the WAL folding every channel — in a fresh
 * process (cold JIT, as after a crash) and then again in the same process (warm JIT, the headline). Baseline: an
 * ordered consumer replaying the same stream, also in a fresh process and then again.
 */
export async function hydrate(ctx: ScenarioContext): Promise<HydrateResult> {
  const s = ctx.sizes.hydrate;
  const prefix = ctx.prefix('hyd');
  const names = hubNames(prefix);
  const seeder = await ctx.host('seed');
  await seeder.call('startHub', { servers: ctx.natsUrl, prefix });
  const rpc = ctx.rpc(prefix);

  ctx.log(`seeding ${s.envelopes} envelopes in ${s.channels} channels through the hub`);
  const agents = await registerAgents(rpc, 'hyd', s.agents);
  const mailboxes = await openMailboxes(rpc, ctx.js, names, agents);
  const channels = await mapLimit(
    Array.from({ length: s.channels }, (_, i) => pairFor(agents, i)),
    50,
    async (p) =>
      textTemplate(
        await openChannel(rpc, { type: CONVERSATION_TYPE, creator: p.creator, invitees: [p.invitee] }),
        p.creator,
      ),
  );
  await closeMailboxes(mailboxes.values());
  const poster = new LeanPoster(ctx.nc, names);
  const perChannel = Math.ceil(s.envelopes / s.channels);
  const seedSeconds = await runCounted({
    loops: channels.length,
    perLoop: perChannel,
    op: async (loop) => {
      const t = channels[loop];
      if (t === undefined) throw new Error(`no channel ${loop}`);
      await poster.post(t.envelope.sender_id, t.withId().body);
    },
  });
  await waitForDelivery(ctx.jsm, names);
  await seeder.call('stopHub', {});
  await seeder.close();
  const walMessages = (await ctx.jsm.streams.info(names.walStream)).state.messages;

  ctx.log(`cold hub over ${walMessages} WAL messages, fresh process then warm`);
  const hubHost = await ctx.host('hub');
  const hubFirst = await coldStart(ctx, hubHost, prefix);
  const hubWarm = await coldStart(ctx, hubHost, prefix);
  await hubHost.close();

  ctx.log('raw ordered-consumer replay, fresh process then warm');
  const rawHost = await ctx.host('raw');
  const replay = (decode: 'none' | 'json' | 'schema') =>
    rawHost.call('replay', { servers: ctx.natsUrl, stream: names.walStream, decode });
  const rawFirst = await replay('none');
  const rawWarm = await replay('none');
  const rawJson = await replay('json');
  const rawSchema = await replay('schema');
  const kv = await rawHost.call('kvLoad', { servers: ctx.natsUrl, bucket: names.channelsBucket });
  const rate = (seconds: number) => ({ seconds: round(seconds), per_s: round(walMessages / seconds, 1) });
  const hubFirstRate = rate(hubFirst);
  const hubWarmRate = rate(hubWarm);
  const rawFirstRate = rate(rawFirst.seconds);
  const rawWarmRate = rate(rawWarm.seconds);
  return {
    channels: s.channels,
    envelopes_posted: perChannel * channels.length,
    wal_messages: walMessages,
    seed_s: round(seedSeconds),
    seed_per_s: round((perChannel * channels.length) / seedSeconds, 1),
    hub_first: hubFirstRate,
    hub_warm: hubWarmRate,
    raw_first: rawFirstRate,
    raw_warm: rawWarmRate,
    ratio: ratio(hubWarmRate.per_s, rawWarmRate.per_s),
    ratio_first: ratio(hubFirstRate.per_s, rawFirstRate.per_s),
    replay_json: rate(rawJson.seconds),
    replay_schema: rate(rawSchema.seconds),
    kv_metadata_load_s: round(kv.seconds),
  };
}

/** Starts a hub over the existing prefix, returns the seconds to active, and stops it again (releasing the lease). */
async function coldStart(ctx: ScenarioContext, host: HostProcess, prefix: string): Promise<number> {
  const { start_ms: ms } = await host.call('startHub', { servers: ctx.natsUrl, prefix });
  await host.call('stopHub', {});
  return ms / 1000;
}
