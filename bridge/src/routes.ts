import { heldBy, partitionHolders, type HubClient } from '@ag2net/client';
import { AccessDeniedError, EV_TEXT, IdSchema, InvalidRequestError, newId, type DeliveryLag } from '@ag2net/protocol';
import { type z } from 'zod';
import {
  ActivityReplySchema,
  AdapterStateReplySchema,
  AgentsPageSchema,
  AgentsQuerySchema,
  AuditPageSchema,
  AuditQuerySchema,
  ChannelReplySchema,
  ChannelsPageSchema,
  ChannelsQuerySchema,
  CloseChannelSchema,
  HubHealthSchema,
  HubStatusSchema,
  LogPageSchema,
  LogQuerySchema,
  MeSchema,
  OpenChannelSchema,
  PassportReplySchema,
  PostReplySchema,
  PostSchema,
  ResumeReplySchema,
  SessionSchema,
  SignInSchema,
  SkillReplySchema,
  StreamQuerySchema,
  TaskReplySchema,
  TasksPageSchema,
  TasksQuerySchema,
} from './api-schemas.js';
import { agentActivity, channelPreviews } from './channel-tails.js';
import { allChannels, channelsPage } from './channel-pages.js';
import { route, type Actor, type Route } from './route.js';

/** What the routes need beyond the actor: sign-in, and the streams (served by the server itself). */
export interface RouteDeps {
  /** Signs in from the client's `address` (sign-ins are limited per name and per address). */
  signIn(body: z.output<typeof SignInSchema>, address: string | undefined): Promise<z.output<typeof SessionSchema>>;
  /**
   * The bridge's operator connection, `null` without one: the hub status asks the roster and reads the delivery
   * consumer over it, the only NATS user of the bridge allowed to.
   */
  readonly operator: HubClient | null;
}

/** A path parameter that must be an id. */
function idParam(params: Readonly<Record<string, string>>, name: string): string {
  const id = IdSchema.safeParse(params[name]);
  if (!id.success) throw new InvalidRequestError(`${name} is not an id`);
  return id.data;
}

/** The person behind a write; the operator reads everything but acts as nobody. */
function personOf(actor: Actor) {
  if (actor.human === null) throw new AccessDeniedError('only a person signed in as themself can do this');
  return actor.human;
}

/** Every route of the API; the server dispatches on it and `/v1/openapi.json` is generated from it. */
export function bridgeRoutes(deps: RouteDeps): readonly Route[] {
  return [
    route({
      method: 'POST',
      path: '/v1/session',
      summary: 'Sign in with a name and API key (or `$operator` and the operator key): a bearer token',
      access: 'open',
      body: SignInSchema,
      response: SessionSchema,
      handle: ({ body, address }) => deps.signIn(body, address),
    }),
    route({
      method: 'GET',
      path: '/v1/me',
      summary: 'Who the token acts as',
      access: 'read',
      response: MeSchema,
      handle: ({ actor }) =>
        Promise.resolve({
          name: actor.name,
          operator: actor.role === 'operator',
          agent_id: actor.human?.agentId ?? null,
        }),
    }),
    route({
      method: 'GET',
      path: '/v1/me/stream',
      summary: "Server-Sent Events: the signed-in person's deliveries (envelopes of their channels they may see)",
      access: 'person',
      query: StreamQuerySchema,
      response: null,
      handle: streamed,
    }),
    route({
      method: 'GET',
      path: '/v1/agents',
      summary: 'The agent directory, one page',
      access: 'read',
      query: AgentsQuerySchema,
      response: AgentsPageSchema,
      handle: ({ actor, query }) => actor.hub.call('listAgents', query),
    }),
    route({
      method: 'GET',
      path: '/v1/agents/{name_or_id}',
      summary: "An agent's passport",
      access: 'read',
      response: PassportReplySchema,
      handle: ({ actor, params }) => actor.hub.call('getAgent', { name_or_id: params['name_or_id'] ?? '' }),
    }),
    route({
      method: 'GET',
      path: '/v1/agents/{agent_id}/resume',
      summary: "An agent's resume (observed track record)",
      access: 'read',
      response: ResumeReplySchema,
      handle: ({ actor, params }) => actor.hub.call('getResume', { agent_id: idParam(params, 'agent_id') }),
    }),
    route({
      method: 'GET',
      path: '/v1/agents/{agent_id}/skill',
      summary: "An agent's SKILL.md (`null` when it has none)",
      access: 'read',
      response: SkillReplySchema,
      handle: ({ actor, params }) => actor.hub.call('getSkill', { agent_id: idParam(params, 'agent_id') }),
    }),
    route({
      method: 'GET',
      path: '/v1/channels',
      summary: 'The channels the caller takes part in (every channel for the operator), one page, filtered',
      access: 'member',
      query: ChannelsQuerySchema,
      response: ChannelsPageSchema,
      handle: async ({ actor, query }) => {
        const { type, preview, ...filter } = query;
        const page = await channelsPage(actor.hub, filter);
        const channels = type === undefined ? page.channels : page.channels.filter((c) => c.manifest.type === type);
        return {
          channels,
          next_cursor: page.next_cursor,
          ...(preview === 'true' ? { previews: await channelPreviews(actor.hub, channels) } : {}),
        };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/activity',
      summary:
        "When each agent was last seen (its newest envelope) in the caller's most recent channels, and who is online",
      access: 'member',
      response: ActivityReplySchema,
      handle: async ({ actor }) => {
        return agentActivity(actor.hub, await allChannels(actor.hub, {}, 500), Date.now());
      },
    }),
    route({
      method: 'POST',
      path: '/v1/channels',
      summary: 'Open a channel as the person with the targets (names or ids); answers once every invitee acked',
      access: 'person',
      body: OpenChannelSchema,
      status: 201,
      response: ChannelReplySchema,
      handle: async ({ actor, body }) => {
        const channel = await personOf(actor).open(body);
        return { channel: channel.metadata };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/channels/{channel_id}',
      summary: "A channel's metadata (participants and the operator)",
      access: 'member',
      response: ChannelReplySchema,
      handle: ({ actor, params }) => actor.hub.call('getChannel', { channel_id: idParam(params, 'channel_id') }),
    }),
    route({
      method: 'GET',
      path: '/v1/channels/{channel_id}/state',
      summary: "The channel's adapter state as the caller may see it",
      access: 'member',
      response: AdapterStateReplySchema,
      handle: ({ actor, params }) => actor.hub.call('adapterState', { channel_id: idParam(params, 'channel_id') }),
    }),
    route({
      method: 'POST',
      path: '/v1/channels/{channel_id}/close',
      summary: 'Close a channel the person takes part in',
      access: 'person',
      body: CloseChannelSchema,
      response: ChannelReplySchema,
      handle: async ({ actor, params, body }) => ({
        channel: await personOf(actor).closeChannel(idParam(params, 'channel_id'), body.reason),
      }),
    }),
    route({
      method: 'GET',
      path: '/v1/channels/{channel_id}/log',
      summary: "A page of the channel's log by sequence: the envelopes the caller may see",
      access: 'member',
      query: LogQuerySchema,
      response: LogPageSchema,
      handle: ({ actor, params, query }) =>
        actor.hub.call('readWal', {
          channel_id: idParam(params, 'channel_id'),
          ...(query.since === undefined ? {} : { since: query.since }),
          ...(query.until === undefined ? {} : { until: query.until }),
          limit: query.limit ?? 200,
        }),
    }),
    route({
      method: 'GET',
      path: '/v1/channels/{channel_id}/stream',
      summary: "Server-Sent Events: the channel's log live, event id = sequence, resumable with Last-Event-ID",
      access: 'member',
      query: StreamQuerySchema,
      response: null,
      handle: streamed,
    }),
    route({
      method: 'POST',
      path: '/v1/channels/{channel_id}/envelopes',
      summary: 'Post into the channel as the person (text, or any event type such as an invite ack)',
      access: 'person',
      body: PostSchema,
      status: 201,
      response: PostReplySchema,
      handle: ({ actor, params, body }) => {
        const human = personOf(actor);
        const eventType = body.event_type ?? EV_TEXT;
        const eventData = body.event_data ?? (body.text === undefined ? {} : { text: body.text });
        return human.sendEnvelope({
          envelope_id: body.envelope_id ?? newId(),
          channel_id: idParam(params, 'channel_id'),
          event_type: eventType,
          event_data: eventData,
          audience: body.audience ?? null,
          causation_id: body.causation_id ?? null,
        });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/tasks',
      summary: 'The tasks the caller may see (owned, or of its channels; all for the operator), one page',
      access: 'member',
      query: TasksQuerySchema,
      response: TasksPageSchema,
      handle: ({ actor, query }) => actor.hub.call('listTasks', query),
    }),
    route({
      method: 'GET',
      path: '/v1/tasks/{task_id}',
      summary: 'A task the caller may see',
      access: 'member',
      response: TaskReplySchema,
      handle: ({ actor, params }) => actor.hub.call('getTask', { task_id: idParam(params, 'task_id') }),
    }),
    route({
      method: 'GET',
      path: '/v1/audit',
      summary: 'The audit trail, oldest first, filtered (operator)',
      access: 'operator',
      query: AuditQuerySchema,
      response: AuditPageSchema,
      handle: ({ actor, query }) => {
        const { kinds, ...rest } = query;
        return actor.hub.call('readAudit', {
          ...rest,
          kinds: kinds === undefined ? [] : kinds.split(',').filter((k) => k !== ''),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/hub/health',
      summary: "The answering hub's health, with the partitions it holds, and partition 0's lease when it holds it",
      access: 'read',
      response: HubHealthSchema,
      handle: async ({ actor }) => {
        const health = await actor.hub.call('health', {});
        const first = heldBy(health).find((p) => p.partition === 0);
        return { health, lease: first === undefined ? null : { holder: health.hub_id, epoch: first.epoch } };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/hub/status',
      summary:
        'Every hub with its health and held partitions, every partition with its holder, and the delivery lag (operator)',
      access: 'operator',
      response: HubStatusSchema,
      handle: () => hubStatus(deps.operator),
    }),
  ];
}

/** How long the status waits for one partition's delivery lag, retries included, in ms. */
const PARTITION_LAG_WAIT_MS = 2_000;

/**
 * The roster, who holds each partition and the delivery lag, over the bridge's operator connection (the route is the
 * operator's only). The lag is asked of the partitions some hub holds, each on its own: a partition nobody holds has
 * nobody to measure it, and one that does not answer in time is left out of the sum rather than failing the status
 * that shows why.
 */
async function hubStatus(hub: HubClient | null): Promise<z.output<typeof HubStatusSchema>> {
  if (hub === null) throw new AccessDeniedError('the hub status is for the operator only');
  const hubs = await hub.hubs();
  // Every hub of a prefix runs with its count. With none answering, the count this connection learnt earlier (asking
  // again would find no hub): every partition is then shown without a holder.
  const partitions = hubs[0]?.partitions ?? (await hub.partitions({ retryForMs: 0 }).catch(() => null));
  const holders = partitions === null ? [] : partitionHolders(hubs, partitions);
  const held = holders.filter((p) => p.held_by.length > 0).map((p) => p.partition);
  return {
    partitions,
    hubs,
    holders,
    unheld: holders.filter((p) => p.held_by.length === 0).map((p) => p.partition),
    delivery: held.length === 0 ? null : await deliveryOf(hub, partitions === 1 ? null : held),
  };
}

/**
 * The delivery lag of the deployment (`held` null: one partition) or of the partitions in `held`: `pending` and
 * `ack_pending` summed, the oldest pending age the largest; `null` when none answered with a delivery consumer.
 */
async function deliveryOf(hub: HubClient, held: readonly number[] | null): Promise<DeliveryLag | null> {
  if (held === null) return hub.deliveryLag();
  const answers = await Promise.allSettled(
    held.map((partition) => hub.deliveryLag({ partition, retryForMs: PARTITION_LAG_WAIT_MS })),
  );
  const lags = answers.flatMap((a) => (a.status === 'fulfilled' && a.value !== null ? [a.value] : []));
  if (lags.length === 0) {
    const failed = answers.find((a) => a.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return null;
  }
  const ages = lags.flatMap((l) => (l.oldest_pending_age_seconds === null ? [] : [l.oldest_pending_age_seconds]));
  return {
    pending: lags.reduce((n, l) => n + l.pending, 0),
    ack_pending: lags.reduce((n, l) => n + l.ack_pending, 0),
    oldest_pending_age_seconds: ages.length === 0 ? null : Math.max(...ages),
  };
}

/** Stream routes are served by the server's stream loop; their entry here is their contract only. */
function streamed(): Promise<never> {
  return Promise.reject(new Error('a stream route is served by the stream loop'));
}
