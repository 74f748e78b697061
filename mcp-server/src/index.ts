/**
 * One identity of the ag2net network as an MCP server: a model host (an IDE, a desktop assistant, a coding agent)
 * becomes a participant of its own channels, with AG2's network tools (`say`, `delegate`, `peers`, `channels`,
 * `tasks`, `context`) plus `inbox`, and its channels' transcripts as resources.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * import { connectIdentity, createMcpServer, startSession } from '@ag2net/mcp-server';
 *
 * const identity = await connectIdentity({ credsPath: '.data/creds/…/scout.creds', servers: 'nats://127.0.0.1:4222' });
 * const session = startSession(identity.participant);
 * await createMcpServer({ session }).connect(new StdioServerTransport());
 * ```
 */
export { createMcpServer, MCP_SERVER_VERSION } from './server.js';
export type { CreateMcpServerOptions } from './server.js';
export { serveMcpHttpRequest } from './http.js';
export type { McpHttpRequestOptions } from './http.js';
export { startSession } from './session.js';
export type { NetworkSession, SessionOptions } from './session.js';
export { InboxBuffer, DEFAULT_INBOX_CAPACITY } from './inbox-buffer.js';
export type { InboxRead, TakeOptions } from './inbox-buffer.js';
export { connectIdentity, agentIdOfCredsFile, IdentityError } from './identity.js';
export type { ConnectIdentityOptions, ConnectedIdentity } from './identity.js';
export { ToolFailure, ToolErrorCode, toolErrorOf } from './errors.js';
export type { ToolErrorText } from './errors.js';
export { CHANNEL_URI_TEMPLATE, channelUri } from './resources.js';
export { NETWORK_TOOLS } from './tools/index.js';
export type { NetworkTool, ToolContext, ToolOutput } from './tools/tool.js';
export { whoseTurn } from './turn.js';
export type { Turn } from './turn.js';
export { stderrLogger } from './log.js';
export type { Logger, LogLevel } from './log.js';
