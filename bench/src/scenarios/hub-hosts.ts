import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { HubRpc } from '@ag2net/client';
import type { HubNames } from '@ag2net/protocol';
import { Kvm } from '@nats-io/kv';
import { performance } from 'node:perf_hooks';
import type { HostProcess } from '../host/client.js';
import type { LoggedChannel } from '../load/log-check.js';
import { closeMailboxes, mapLimit, openChannel, openMailboxes, pairFor, registerAgents } from '../load/network.js';
import type { RunningHub } from '../load/partitions.js';
import { PostLoad, type PostTarget } from '../load/post-load.js';
import type { ScenarioContext } from './context.js';

/** How long one attempt of a failover load's post waits for its ack, ms (the SDK's default: 10 000). */
export const ATTEMPT_TIMEOUT_MS = 2_000;
/** How long the failover load's client keeps sending one post again, ms. */
const RETRY_FOR_MS = 60_000;
/** How long a single-attempt probe post waits for its ack, ms. */
const PROBE_TIMEOUT_MS = 250;

/** Where `startHubIn` starts a hub. */
export interface HubStart {
  readonly prefix: string;
  /** Compete for the lease instead of waiting until active. */
  readonly standby: boolean;
  /** The prefix's partition count; default the host's (1). */
  readonly partitions?: number;
}

/** Starts a hub in `host`: resolves once it is active, or with `standby` once it competes for the lease. */
export async function startHubIn(ctx: ScenarioContext, host: HostProcess, start: HubStart): Promise<RunningHub> {
  const { prefix, standby, partitions } = start;
  const params = { servers: ctx.natsUrl, prefix, standby, ...(partitions === undefined ? {} : { partitions }) };
  const { hub_id: hubId } = await host.call('startHub', params);
  return { host, hubId };
}

/** Hubs of one prefix started by `startHubs`, and when the first of them became active (`performance.now()`). */
export interface StartedHubs {
  readonly hubs: readonly RunningHub[];
  readonly firstActive: number;
}

/**
 * Starts `count` hubs on one prefix of `partitions` partitions: the first until it is active, then the others at once
 * (they join it). `host(i)` gives the host of hub `i`; it is called for the first before the others.
 */
export async function startHubs(
  ctx: ScenarioContext,
  options: {
    readonly prefix: string;
    readonly partitions: number;
    readonly count: number;
    readonly host: (i: number) => HostProcess | Promise<HostProcess>;
  },
): Promise<StartedHubs> {
  const { prefix, partitions, count, host } = options;
  const first = await startHubIn(ctx, await host(0), { prefix, partitions, standby: false });
  const firstActive = performance.now();
  const hosts = await Promise.all(Array.from({ length: count - 1 }, (_, i) => Promise.resolve(host(i + 1))));
  const rest = await Promise.all(hosts.map((h) => startHubIn(ctx, h, { prefix, partitions, standby: true })));
  return { hubs: [first, ...rest], firstActive };
}

/** The time to live of the prefix's leases, ms (what the hubs run with). */
export async function leaseTtlOf(ctx: ScenarioContext, names: HubNames): Promise<number> {
  return (await (await new Kvm(ctx.nc).open(names.leasesBucket)).status()).ttl;
}

/**
 * The load of a failover: closed loops into `targets` through a client that resends as clients do (each attempt
 * waiting `ATTEMPT_TIMEOUT_MS`), and single-attempt probes into `probes` every `probeEveryMs`. Each call starts one.
 */
export function failoverLoad(
  ctx: ScenarioContext,
  options: {
    readonly prefix: string;
    readonly targets: readonly PostTarget[];
    readonly probes: readonly PostTarget[];
    readonly paceMs: number;
    readonly probeEveryMs: number;
  },
): () => PostLoad {
  const { prefix, targets, probes, paceMs, probeEveryMs } = options;
  const rpc = new HubRpc(ctx.nc, { prefix, retryForMs: RETRY_FOR_MS, requestTimeoutMs: ATTEMPT_TIMEOUT_MS });
  return () => PostLoad.start({ rpc, targets, paceMs, probes, probeEveryMs, probeTimeoutMs: PROBE_TIMEOUT_MS });
}

/** Options of `openConversations`. */
export interface ConversationsOptions {
  /** The agents are named `<label>-<i>`. */
  readonly label: string;
  /** How many agents to register. */
  readonly agents: number;
  /** One conversation with each of these ids. */
  readonly channelIds: readonly string[];
  /** The two ends of conversation `i` among the agents; default `pairFor`. */
  readonly pair?: (agents: readonly string[], i: number) => { creator: string; invitee: string };
}

/**
 * Registers the agents and opens the conversations through the handshake (the invitees' mailboxes ack the invites),
 * eight at a time; the creator of each posts in it and reads its log.
 */
export async function openConversations(
  ctx: ScenarioContext,
  rpc: HubRpc,
  options: ConversationsOptions,
): Promise<LoggedChannel[]> {
  const { pair = pairFor } = options;
  const agents = await registerAgents(rpc, options.label, options.agents);
  const mailboxes = await openMailboxes(rpc, ctx.js, rpc.names, agents);
  const channels = await mapLimit(options.channelIds, 8, async (channelId, i) => {
    const p = pair(agents, i);
    await openChannel(rpc, { type: CONVERSATION_TYPE, creator: p.creator, invitees: [p.invitee], channelId });
    return { channelId, readerId: p.creator };
  });
  await closeMailboxes(mailboxes.values());
  return channels;
}

/** Where a channel's creator posts: its loop's or probe's target. */
export const targetOf = (c: LoggedChannel): PostTarget => ({ channelId: c.channelId, senderId: c.readerId });
