/**
 * An MCP host for tests: the MCP SDK's own client, over stdio (spawning `ag2net-mcp`) or Streamable HTTP, and tool
 * calls read the way a model host reads them (the first text content, and whether it is an error).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The repository's root directory. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The entry of `ag2net-mcp` from its sources, as `node` runs it (relative to `ROOT`). */
export const MCP_MAIN = ['--conditions=@ag2net/source', '--import', 'tsx', 'mcp-server/src/main.ts'] as const;

const TextContentSchema = z.object({ type: z.literal('text'), text: z.string() });
const ToolResultSchema = z.looseObject({ content: z.array(z.looseObject({})), isError: z.boolean().optional() });

/** A tool's answer as a model host reads it. */
export interface ToolAnswer {
  readonly text: string;
  readonly isError: boolean;
}

/** An MCP client connected to a server. */
export interface McpHost {
  readonly client: Client;
  /** What the server process wrote to standard error so far (stdio only). */
  stderr(): string;
  /** Calls a tool; its first text content and whether it is an error. */
  call(name: string, args: Record<string, unknown>): Promise<ToolAnswer>;
  /** Calls a tool that answers JSON; throws when it answers an error. */
  json(name: string, args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

function hostOf(client: Client, stderr: () => string): McpHost {
  const call = async (name: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
    const result = ToolResultSchema.parse(await client.callTool({ name, arguments: args }));
    return { text: TextContentSchema.parse(result.content[0]).text, isError: result.isError === true };
  };
  return {
    client,
    stderr,
    call,
    async json(name, args) {
      const { text, isError } = await call(name, args);
      if (isError) throw new Error(`${name} failed: ${text}`);
      const parsed: unknown = JSON.parse(text);
      return parsed;
    },
    close: () => client.close(),
  };
}

/** Spawns `command args` in `cwd` (default `ROOT`) and connects to it over stdio, with this process's environment. */
export async function stdioHost(options: {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
}): Promise<McpHost> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({
    command: options.command,
    args: [...options.args],
    cwd: options.cwd ?? ROOT,
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'ag2net-test-host', version: '1.0.0' });
  await client.connect(transport);
  return hostOf(client, () => stderr);
}

/** Connects to an MCP server over Streamable HTTP at `url`, sending `headers` with every request. */
export async function httpHost(url: string, headers: Readonly<Record<string, string>> = {}): Promise<McpHost> {
  const client = new Client({ name: 'ag2net-test-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { ...headers } } }));
  return hostOf(client, () => '');
}
