import type { HumanClient, Logger } from '@ag2net/client';
import { serveMcpHttpRequest, startSession, type NetworkSession } from '@ag2net/mcp-server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { HttpError } from './http-errors.js';
import { route, type Actor, type Route } from './route.js';

/** Where the bridge serves MCP. */
export const MCP_PATH = '/mcp';

/** What the MCP gateway needs of the bridge. */
export interface McpGatewayOptions {
  /** The actor of a request to `route`, as every route of the bridge authenticates it (token, rate limit, access). */
  readonly authorize: (route: Route, req: IncomingMessage, query: Readonly<Record<string, string>>) => Promise<Actor>;
  /** Reads a JSON body with the bridge's guards (size, depth, content type). */
  readonly readBody: (req: IncomingMessage) => Promise<unknown>;
  readonly logger: Logger;
}

/** MCP on the bridge: the signed-in person's identity as an MCP server (Streamable HTTP, stateless). */
export interface McpGateway {
  /** Its route, for the OpenAPI document (served by `serve`, not by the route table). */
  readonly routes: readonly Route[];
  /** Whether `path` is the gateway's. */
  serves(path: string): boolean;
  /** Serves a request to `MCP_PATH`. */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    target: { readonly query: Readonly<Record<string, string>> },
  ): Promise<void>;
  /** Ends every person's MCP session on this replica. */
  close(): void;
}

function unreachable(): Promise<never> {
  return Promise.reject(new Error('the MCP route is served by the MCP gateway'));
}

/** The MCP route (for dispatch and the OpenAPI document). */
export function mcpRoute(): Route {
  return route({
    method: 'POST',
    path: MCP_PATH,
    summary:
      "MCP (Streamable HTTP, stateless, JSON answers) as the signed-in person: the network tools (say, delegate, peers, channels, tasks, context, inbox) and the person's channel transcripts as resources",
    access: 'person',
    body: z.union([
      z.looseObject({ jsonrpc: z.literal('2.0') }),
      z.array(z.looseObject({ jsonrpc: z.literal('2.0') })),
    ]),
    response: z.looseObject({ jsonrpc: z.literal('2.0') }),
    handle: unreachable,
  });
}

/**
 * Builds the gateway. A request acts as the person its bearer token names, over that person's own identity
 * connection (never as the bridge); the person's inbox lives as long as that connection does on this replica.
 */
export function mcpGateway(options: McpGatewayOptions): McpGateway {
  const mcp = mcpRoute();
  const sessions = new Map<string, { readonly human: HumanClient; readonly session: NetworkSession }>();

  /** The person's session, made anew when their identity connection was attached again since. */
  const sessionOf = (name: string, human: HumanClient): NetworkSession => {
    const held = sessions.get(name);
    if (held?.human === human) return held.session;
    held?.session.close();
    const session = startSession(human, { logger: options.logger });
    sessions.set(name, { human, session });
    void human.closed().then(() => {
      if (sessions.get(name)?.session === session) sessions.delete(name);
    });
    return session;
  };

  return {
    routes: [mcp],
    serves: (path) => path === MCP_PATH,
    async serve(req, res, target) {
      // Stateless Streamable HTTP: no server-sent stream to resume (GET) and no session to end (DELETE).
      if (req.method !== 'POST')
        throw new HttpError('invalid_request', 'MCP here takes POST only (stateless)', { status: 405 });
      const actor = await options.authorize(mcp, req, target.query);
      const human = actor.human;
      if (human === null) throw new HttpError('access_denied', 'MCP acts as a signed-in person');
      const body = await options.readBody(req);
      await serveMcpHttpRequest({
        req,
        res,
        session: sessionOf(actor.name, human),
        parsedBody: body,
        logger: options.logger,
      });
    },
    close() {
      for (const { session } of sessions.values()) session.close();
      sessions.clear();
    },
  };
}
