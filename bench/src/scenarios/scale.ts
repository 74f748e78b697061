import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { hubNames } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import {
  closeMailboxes,
  mapLimit,
  openChannel,
  openMailboxes,
  registerAgents,
  waitForDelivery,
} from '../load/network.js';
import type { ScaleResult } from '../results.js';
import { round, summarize } from '../stats.js';
import type { ScenarioContext } from './context.js';

/** Channel creations in flight during setup. */
const CREATE_CONCURRENCY = 64;
/** Sweeper ticks run and thrown away before the measured ones. */
const TICK_WARMUP = 2;

/**
 * Scale: A agents registered, then C conversation channels opened through the real handshake (each creator
 * invites one of a few "acker" agents, whose inboxes the bench reads and whose invites it acks) and left idle.
 * Measured inside the hub's process: memory after full garbage collections before the agents, after them and after
 * the channels (per-channel cost = the difference ÷ C), and the duration of the hub's sweeper tick over them all.
 */
export async function scale(ctx: ScenarioContext): Promise<ScaleResult> {
  const s = ctx.sizes.scale;
  const prefix = ctx.prefix('scl');
  const names = hubNames(prefix);
  const host = await ctx.host('hub');
  await host.call('startHub', { servers: ctx.natsUrl, prefix });
  const rpc = ctx.rpc(prefix);
  const memoryStart = await host.call('memory', {});

  ctx.log(`registering ${s.agents} agents`);
  let t0 = performance.now();
  const agents = await registerAgents(rpc, 'scl', s.agents, 16);
  const registerSeconds = (performance.now() - t0) / 1000;
  const memoryAgents = await host.call('memory', {});

  const ackers = agents.slice(0, s.ackers);
  const creators = agents.slice(s.ackers);
  const mailboxes = await openMailboxes(rpc, ctx.js, names, ackers);
  ctx.log(`opening ${s.channels} channels through the handshake, ${CREATE_CONCURRENCY} at a time`);
  t0 = performance.now();
  let done = 0;
  const specs = Array.from({ length: s.channels }, (_, i) => ({
    creator: creators[i % creators.length] ?? '',
    invitee: ackers[i % ackers.length] ?? '',
  }));
  await mapLimit(specs, CREATE_CONCURRENCY, async (spec) => {
    await openChannel(rpc, { type: CONVERSATION_TYPE, creator: spec.creator, invitees: [spec.invitee] });
    done += 1;
    if (done % 2000 === 0) ctx.log(`${done} channels open`);
  });
  const createSeconds = (performance.now() - t0) / 1000;
  await closeMailboxes(mailboxes.values());
  await waitForDelivery(ctx.jsm, names);
  const memoryChannels = await host.call('memory', {});

  ctx.log(`${TICK_WARMUP} + ${s.ticks} sweeper ticks over ${s.channels} open channels`);
  const { durations_ms: ticks } = await host.call('tick', { count: TICK_WARMUP + s.ticks });
  return {
    agents: s.agents,
    channels: s.channels,
    register_s: round(registerSeconds),
    create_s: round(createSeconds),
    create_per_s: round(s.channels / createSeconds, 1),
    memory_start: memoryStart,
    memory_agents: memoryAgents,
    memory_channels: memoryChannels,
    heap_per_agent_bytes: Math.round((memoryAgents.heap_used - memoryStart.heap_used) / s.agents),
    heap_per_channel_bytes: Math.round((memoryChannels.heap_used - memoryAgents.heap_used) / s.channels),
    rss_per_channel_bytes: Math.round((memoryChannels.rss - memoryAgents.rss) / s.channels),
    tick: summarize(ticks.slice(TICK_WARMUP)),
  };
}
