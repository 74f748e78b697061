import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { silentLogger } from '@ag2net/client';
import { ToolErrorCode, ToolFailure, toolErrorOf } from './errors.js';
import type { Logger } from './log.js';
import { registerChannelResources } from './resources.js';
import type { NetworkSession } from './session.js';
import { NETWORK_TOOLS } from './tools/index.js';

/** The version the server reports to MCP clients. */
export const MCP_SERVER_VERSION = '0.1.0';

/** Options of `createMcpServer`. */
export interface CreateMcpServerOptions {
  /** The identity the server acts as. */
  readonly session: NetworkSession;
  /** pino-compatible logger; default silent. Tool failures of kind `internal` are logged here with their cause. */
  readonly logger?: Logger;
}

function toolOf(name: string): (typeof NETWORK_TOOLS)[number] | undefined {
  return NETWORK_TOOLS.find((t) => t.name === name);
}

/**
 * An MCP server for one identity of the network: the network tools (`say`, `delegate`, `peers`, `channels`, `tasks`,
 * `context`, `inbox`) and the transcripts of its channels as resources. Connect it to any MCP transport (stdio,
 * Streamable HTTP); each connection needs a server of its own, all may share one session.
 */
export function createMcpServer(options: CreateMcpServerOptions): McpServer {
  const { session } = options;
  const logger = options.logger ?? silentLogger;
  const server = new McpServer(
    { name: 'ag2net', version: MCP_SERVER_VERSION },
    {
      instructions:
        `You act on the ag2net agent network as ${session.participant.passport.name} ` +
        `(agent_id ${session.participant.agentId}). Find agents with peers, ask one with delegate, read what ` +
        'arrived with inbox, see your channels with channels and post with say.',
    },
  );
  // Tools are served by hand rather than by registerTool: a refused argument must come back as a tool error that
  // starts with the network's stable code (`invalid_request: …`), like every other refusal.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: NETWORK_TOOLS.map((t): Tool => ({
      name: t.name,
      description: t.description,
      inputSchema: { ...t.inputJsonSchema, type: 'object' },
      annotations: { readOnlyHint: t.readOnly, openWorldHint: true },
    })),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = toolOf(request.params.name);
    // A name the server does not know is the caller's text: logged short.
    const named = tool?.name ?? request.params.name.slice(0, 64);
    try {
      if (tool === undefined) throw new ToolFailure(ToolErrorCode.NotFound, `no tool named ${request.params.name}`);
      const output = await tool.call({ session, signal: extra.signal, logger }, request.params.arguments);
      return {
        content: [{ type: 'text', text: output.text }],
        ...(output.structured === undefined ? {} : { structuredContent: output.structured }),
      };
    } catch (err) {
      const failure = toolErrorOf(err);
      if (failure.code === 'internal') logger.error({ err, tool: named }, 'tool failed');
      else logger.debug({ tool: named, code: failure.code }, 'tool refused');
      return { isError: true, content: [{ type: 'text', text: failure.text }] };
    }
  });
  registerChannelResources(server, { session, logger });
  return server;
}
