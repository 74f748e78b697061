import { DISCUSSION_TYPE } from '@ag2net/adapters';
import { hubNames } from '@ag2net/protocol';
import { headers } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import type { Mailbox } from '../load/mailbox.js';
import { closeMailboxes, openChannel, openMailboxes, registerAgents } from '../load/network.js';
import { LeanPoster, POST_TIMEOUT_MS, textTemplate } from '../load/poster.js';
import { RelayHeader } from '../raw/relay.js';
import { rawNames } from '../raw/streams.js';
import type { FanoutResult } from '../results.js';
import { ratio, summarize } from '../stats.js';
import type { ScenarioContext } from './context.js';
import { openRawMailboxes } from './raw-mailboxes.js';

const DiscussionStateSchema = z.looseObject({ participant_order: z.array(z.string()) });

/**
 * Fan-out: a round-robin discussion of N participants; whoever's turn it is broadcasts (audience: everyone), and
 * the sample is the time from the post until the last of the other N−1 inbox consumers has it. Baseline: the raw
 * relay with the same N−1 recipients (one append, N−1 inbox publishes at once, N−1 inbox consumers). Hub and raw
 * samples alternate.
 */
export async function fanout(ctx: ScenarioContext): Promise<FanoutResult> {
  const s = ctx.sizes.fanout;
  const prefix = ctx.prefix('fan');
  const names = hubNames(prefix);
  const raw = rawNames(prefix);
  const host = await ctx.host('hub');
  await host.call('startHub', { servers: ctx.natsUrl, prefix });
  await host.call('startRelay', { servers: ctx.natsUrl, prefix });

  const rpc = ctx.rpc(prefix);
  const agents = await registerAgents(rpc, 'fan', s.participants);
  const mailboxes = await openMailboxes(rpc, ctx.js, names, agents, { trackArrivals: true });
  const [creator, ...invitees] = agents;
  if (creator === undefined) throw new Error('no agents');
  const channel = await openChannel(rpc, { type: DISCUSSION_TYPE, creator, invitees });
  const { state } = await rpc.call('adapterState', { channel_id: channel }, { caller: creator });
  const order = DiscussionStateSchema.parse(state).participant_order;
  const rawRecipients = agents.map((_, i) => `p${i}`);
  const rawBoxes = await openRawMailboxes(ctx, raw, rawRecipients);

  const poster = new LeanPoster(ctx.nc, names);
  const templates = new Map(order.map((id) => [id, textTemplate(channel, id)]));
  const hub = { ack: [] as number[], all: [] as number[] };
  const base = { ack: [] as number[], all: [] as number[] };
  ctx.log(`${s.participants} participants, ${s.warmup} + ${s.samples} broadcasts`);
  for (let r = 0; r < s.warmup + s.samples; r += 1) {
    const keep = r >= s.warmup;
    const speaker = order[r % order.length] ?? '';
    const message = templates.get(speaker)?.withId();
    if (message === undefined) throw new Error(`no template for ${speaker}`);
    const others = order.filter((id) => id !== speaker).map((id) => mailboxes.get(id));
    let t0 = performance.now();
    await poster.post(speaker, message.body);
    let acked = performance.now();
    let last = Math.max(...(await arrivals(others, message.id)));
    if (keep) {
      hub.ack.push(acked - t0);
      hub.all.push(last - t0);
    }

    const rawSpeaker = r % rawRecipients.length;
    const to = rawRecipients.filter((_, i) => i !== rawSpeaker);
    const rawMessage = templates.get(speaker)?.withId();
    if (rawMessage === undefined) throw new Error(`no template for ${speaker}`);
    const h = headers();
    h.set(RelayHeader.Id, rawMessage.id);
    h.set(RelayHeader.To, to.join(','));
    t0 = performance.now();
    await ctx.nc.request(raw.request('room'), rawMessage.body, { timeout: POST_TIMEOUT_MS, headers: h });
    acked = performance.now();
    last = Math.max(
      ...(await arrivals(
        to.map((id) => rawBoxes.get(id)),
        rawMessage.id,
      )),
    );
    if (keep) {
      base.ack.push(acked - t0);
      base.all.push(last - t0);
    }
  }
  await closeMailboxes([...mailboxes.values(), ...rawBoxes.values()]);

  const hubAll = summarize(hub.all);
  const rawAll = summarize(base.all);
  return {
    participants: s.participants,
    samples: s.samples,
    hub_ack: summarize(hub.ack),
    hub_all: hubAll,
    raw_ack: summarize(base.ack),
    raw_all: rawAll,
    all_p50_ratio: ratio(hubAll.p50_ms, rawAll.p50_ms),
    all_p99_ratio: ratio(hubAll.p99_ms, rawAll.p99_ms),
  };
}

function arrivals(boxes: readonly (Mailbox | undefined)[], envelopeId: string): Promise<number[]> {
  return Promise.all(
    boxes.map((box) => {
      if (box === undefined) throw new Error('a recipient has no mailbox');
      return box.arrival(envelopeId);
    }),
  );
}
