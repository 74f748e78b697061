import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { silentLogger } from '@ag2net/client';
import type { Logger } from './log.js';
import { createMcpServer } from './server.js';
import type { NetworkSession } from './session.js';

/** Options of `serveMcpHttpRequest`. */
export interface McpHttpRequestOptions {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The identity the request acts as (the signed-in caller's, never a service's own). */
  readonly session: NetworkSession;
  /** The request body when the caller already read and parsed it (JSON); default read from `req`. */
  readonly parsedBody?: unknown;
  /** pino-compatible logger; default silent. */
  readonly logger?: Logger;
}

/**
 * Answers one MCP Streamable HTTP request (`POST` of JSON-RPC messages) with a server of its own for `session`, in
 * the transport's stateless mode: no MCP session id, each request complete in itself, answered as JSON. What carries
 * over between requests is the network session (the identity's inbox), which the caller keeps per identity.
 */
export async function serveMcpHttpRequest(options: McpHttpRequestOptions): Promise<void> {
  const logger = options.logger ?? silentLogger;
  const server = createMcpServer({ session: options.session, logger });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  // The request's server lives as long as its response: a client that goes away cancels what it asked for.
  options.res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(options.req, options.res, options.parsedBody);
}
