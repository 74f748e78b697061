import { A2A_VERSION_HEADER, AgentCard as AgentCardCodec, type AgentCard } from '@a2a-js/sdk';
import { LegacyRestTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { formatIssues } from '@ag2net/protocol/internal';
import { InvalidRequestError, NotFoundError, type Passport } from '@ag2net/protocol';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { AgentsPageSchema, AgentsQuerySchema } from '../api-schemas.js';
import { HttpError } from '../http-errors.js';
import type { Logger } from '@ag2net/client';
import type { People } from '../people.js';
import { matchRoute, route, type Actor, type Route } from '../route.js';
import { agentCard, agentCardUrl, agentEndpoint } from './card.js';
import { ChannelTaskHandler, DEFAULT_BLOCKING_WAIT_MS } from './handler.js';
import { serveRpc } from './serve-rpc.js';

/** Where the A2A routes live. */
export const A2A_PREFIX = '/a2a/';

/** What the gateway needs of the bridge. */
export interface A2aGatewayOptions {
  /**
   * The actor of a request to `route`, as every route of the bridge authenticates it: the bearer token, the rate
   * limit, the route's access. Throws the bridge's refusals.
   */
  readonly authorize: (route: Route, req: IncomingMessage, query: Readonly<Record<string, string>>) => Promise<Actor>;
  /** Reads a JSON body with the bridge's guards (size, depth, content type). */
  readonly readBody: (req: IncomingMessage) => Promise<unknown>;
  readonly people: People;
  /** How often a stream reads the log when no delivery woke it, in ms. */
  readonly pollMs: number;
  /** Aborts every stream when the bridge stops. */
  readonly stop: AbortSignal;
  /** Closes a person's connection on this replica: the hub no longer serves them, their session is over. */
  readonly endSession: (actor: Actor) => Promise<void>;
  readonly logger: Logger;
  /** See `DEFAULT_BLOCKING_WAIT_MS`. */
  readonly blockingWaitMs?: number;
}

/** The A2A face of the bridge: a card and a JSON-RPC endpoint per network agent. */
export interface A2aGateway {
  /** Its routes, for the OpenAPI document (served by `serve`, not by the route table). */
  readonly routes: readonly Route[];
  /** Whether `path` is the gateway's. */
  serves(path: string): boolean;
  /** The route template of `path` (the metrics' label), `/a2a/{unmatched}` for none. */
  label(method: string, path: string): string;
  /** Serves a request to one of its paths. */
  serve(req: IncomingMessage, res: ServerResponse, target: RequestPath): Promise<void>;
}

/** A request and its response. */
interface Http {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/** A request's path and decoded query. */
export interface RequestPath {
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
}

const ListEntrySchema = z.strictObject({
  name: z.string(),
  description: z.string(),
  card_url: z.string(),
  url: z.string(),
});
const A2aAgentsPageSchema = z.strictObject({
  agents: z.array(ListEntrySchema),
  next_cursor: AgentsPageSchema.shape.next_cursor,
});
const A2aAgentsQuerySchema = AgentsQuerySchema.pick({ limit: true, cursor: true });
/** The card, as a JSON object (its fields are A2A's). */
const CardReplySchema = z.looseObject({ name: z.string() });

/** A `Host` header fit to build URLs with; anything else falls back to the socket's address. */
const HostSchema = z.string().regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/);

/** The bridge's base URL as the client reached it. */
function baseUrlOf(req: IncomingMessage): string {
  const host = HostSchema.safeParse(req.headers.host);
  const proto = req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
  if (host.success) return `${proto}://${host.data}`;
  const address = req.socket.localAddress ?? '127.0.0.1';
  return `${proto}://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort ?? 0}`;
}

/** Whether a request asks for A2A 0.3 (no `A2A-Version`, as 0.3 clients send none) rather than 1.0. */
function wantsLegacy(req: IncomingMessage): boolean {
  const version = req.headers[A2A_VERSION_HEADER.toLowerCase()];
  return version === undefined || version === '' || (typeof version === 'string' && version.startsWith('0.'));
}

function unreachable(): Promise<never> {
  return Promise.reject(new Error('an A2A route is served by the A2A gateway'));
}

/** The A2A routes: the agent list, an agent's card, an agent's JSON-RPC endpoint (for dispatch and the OpenAPI document). */
export function a2aRoutes(): { readonly list: Route; readonly card: Route; readonly rpc: Route } {
  const listRoute = route({
    method: 'GET',
    path: '/a2a/agents',
    summary: 'A2A: the network agents with their card and JSON-RPC endpoint URLs, one page',
    access: 'read',
    query: A2aAgentsQuerySchema,
    response: A2aAgentsPageSchema,
    handle: unreachable,
  });
  const cardRoute = route({
    method: 'GET',
    path: '/a2a/agents/{name}/.well-known/agent-card.json',
    summary:
      "A2A: an agent's card (A2A 1.0 with `A2A-Version: 1.0`, else 0.3), derived from its passport, resume and skill",
    access: 'read',
    response: CardReplySchema,
    handle: unreachable,
  });
  const rpcRoute = route({
    method: 'POST',
    path: '/a2a/agents/{name}',
    summary:
      'A2A JSON-RPC as the signed-in person (1.0 methods with `A2A-Version: 1.0`, else 0.3): a context is a channel with the agent, a task one request in it; answers JSON or Server-Sent Events, and refusals as JSON-RPC error bodies (docs/a2a.md)',
    access: 'person',
    body: z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string() }),
    response: z.looseObject({ jsonrpc: z.literal('2.0') }),
    handle: unreachable,
  });
  return { list: listRoute, card: cardRoute, rpc: rpcRoute };
}

/** Builds the gateway. */
export function a2aGateway(options: A2aGatewayOptions): A2aGateway {
  const { list: listRoute, card: cardRoute, rpc: rpcRoute } = a2aRoutes();
  const routes = [listRoute, cardRoute, rpcRoute];

  /** The agent of a path, with what its card is made of; not-found for people and unknown names. */
  const cardOf = async (
    actor: Actor,
    name: string,
    req: IncomingMessage,
  ): Promise<{ passport: Passport; card: AgentCard }> => {
    const { passport } = await actor.hub.call('getAgent', { name_or_id: name });
    if (passport.kind === 'human' || passport.agent_id === null || passport.name !== name) {
      throw new NotFoundError(`no agent ${JSON.stringify(name)}`);
    }
    const agentId = passport.agent_id;
    const [resume, skill] = await Promise.all([
      actor.hub
        .call('getResume', { agent_id: agentId })
        .then((r) => r.resume)
        .catch((err: unknown) => {
          if (err instanceof NotFoundError) return null;
          throw err;
        }),
      actor.hub.call('getSkill', { agent_id: agentId }),
    ]);
    return { passport, card: agentCard({ passport, resume, skillMd: skill.skill_md, baseUrl: baseUrlOf(req) }) };
  };

  const handlerOf = (actor: Actor, agent: { passport: Passport; card: AgentCard }, signal: AbortSignal) => {
    const { passport, card } = agent;
    const human = actor.human;
    return new ChannelTaskHandler({
      actor,
      human,
      card,
      parties: { callerId: human?.agentId ?? '', agentId: passport.agent_id ?? '', agentName: passport.name },
      wait: {
        pollMs: options.pollMs,
        signal,
        onDelivery:
          human === null
            ? null
            : (wake) => {
                const callback = (envelope: Parameters<typeof wake>[0]) => wake(envelope);
                human.onEnvelope(callback);
                return () => human.removeEnvelopeCallback(callback);
              },
      },
      blockingWaitMs: options.blockingWaitMs ?? DEFAULT_BLOCKING_WAIT_MS,
    });
  };

  const serveList = async (actor: Actor, http: Http, query: unknown) => {
    const { req, res } = http;
    const parsed = A2aAgentsQuerySchema.safeParse(query);
    if (!parsed.success) throw new InvalidRequestError(formatIssues('invalid query', parsed.error.issues));
    const page = await actor.hub.call('listAgents', { ...parsed.data, kind: 'agent' });
    const base = baseUrlOf(req);
    const agents = page.agents.map((a) => ({
      name: a.name,
      description: `${a.name}${a.provider === null ? '' : ` (${a.provider}/${a.model ?? ''})`}`,
      card_url: agentCardUrl(base, a.name),
      url: agentEndpoint(base, a.name),
    }));
    sendJson(res, 200, { agents, next_cursor: page.next_cursor });
  };

  const serveCard = async (actor: Actor, name: string, http: Http) => {
    const { req, res } = http;
    const agent = await cardOf(actor, name, req);
    const body = wantsLegacy(req)
      ? await new LegacyRestTransportHandler(handlerOf(actor, agent, options.stop)).getAuthenticatedExtendedAgentCard(
          new ServerCallContext(),
        )
      : AgentCardCodec.toJSON(agent.card);
    res.setHeader('vary', 'A2A-Version');
    sendJson(res, 200, body);
  };

  return {
    routes,
    serves: (path) => path.startsWith(A2A_PREFIX) || path === '/a2a',
    label(method, path) {
      const found = matchRoute(routes, method, path);
      return found === null || found === 'method' ? '/a2a/{unmatched}' : found.route.path;
    },
    async serve(req, res, { path, query }) {
      const found = matchRoute(routes, req.method ?? 'GET', path);
      if (found === null) throw new HttpError('not_found', `no route ${req.method ?? ''} ${path}`);
      if (found === 'method')
        throw new HttpError('invalid_request', `${req.method ?? ''} is not allowed here`, { status: 405 });
      const name = found.params['name'] ?? '';
      if (found.route === rpcRoute) {
        await serveRpc({
          req,
          res,
          authorize: () => options.authorize(rpcRoute, req, query),
          readBody: () => options.readBody(req),
          people: options.people,
          stop: options.stop,
          logger: options.logger,
          endSession: options.endSession,
          handler: async (actor, signal) => {
            const agent = await cardOf(actor, name, req);
            return { handler: handlerOf(actor, agent, signal), card: agent.card };
          },
        });
        return;
      }
      const actor = await options.authorize(found.route, req, query);
      if (found.route === listRoute) return serveList(actor, { req, res }, query);
      return serveCard(actor, name, { req, res });
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
