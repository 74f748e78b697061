#!/usr/bin/env node
import { IdentityCredentialsError } from '@ag2net/client';
import { ErrorCode, HubError } from '@ag2net/protocol';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { USAGE, parseMcpArgs, type McpArgs } from './args.js';
import { IdentityError, connectIdentity } from './identity.js';
import { InboxBuffer } from './inbox-buffer.js';
import { stderrLogger } from './log.js';
import { createMcpServer } from './server.js';
import { startSession } from './session.js';

/** `--api-keys`: API keys by identity name, as hub-service's `--api-keys` file holds them. */
const ApiKeysFileSchema = z.record(z.string(), z.string().min(1));

/** The key of `--name` in the `--api-keys` file; `undefined` without either. */
async function apiKeyOf(args: McpArgs): Promise<string | undefined> {
  if (args.apiKeysFile === undefined || args.name === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(args.apiKeysFile, 'utf8'));
  } catch (err) {
    throw new IdentityError(`cannot read the API keys in ${args.apiKeysFile}`, { cause: err });
  }
  const keys = ApiKeysFileSchema.safeParse(parsed);
  if (!keys.success) throw new IdentityError(`${args.apiKeysFile} is not a JSON object of API keys by name`);
  return keys.data[args.name];
}

async function main(): Promise<number> {
  const parsed = parseMcpArgs(process.argv.slice(2), process.env);
  if (parsed.kind === 'help') {
    process.stderr.write(`${USAGE}\n`);
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`${parsed.message}\n\n${USAGE}\n`);
    return 2;
  }
  const { args } = parsed;
  const log = stderrLogger({ level: args.logLevel });
  // Filled from the identity's first delivery on: what waited while it was away reaches the inbox too.
  const inbox = new InboxBuffer();
  let identity;
  try {
    const apiKey = args.apiKey ?? (await apiKeyOf(args));
    identity = await connectIdentity({
      onEnvelope: (envelope) => inbox.push(envelope),
      servers: args.servers,
      prefix: args.prefix,
      logger: log,
      ...(args.credsPath === undefined ? {} : { credsPath: args.credsPath }),
      ...(args.name === undefined ? {} : { name: args.name }),
      ...(args.credsDir === undefined ? {} : { credsDir: args.credsDir }),
      ...(apiKey === undefined ? {} : { apiKey }),
    });
  } catch (err) {
    // Credentials or an admission the hub refuses: a usage error, named by the network's code.
    if (err instanceof IdentityError || err instanceof IdentityCredentialsError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    if (err instanceof HubError && (err.code === ErrorCode.AuthFailed || err.code === ErrorCode.AccessDenied)) {
      process.stderr.write(`${err.code}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const { participant } = identity;
  const session = startSession(participant, { inbox, logger: log });
  const server = createMcpServer({ session, logger: log });
  const transport = new StdioServerTransport();
  log.info({ agent: participant.passport.name, agentId: participant.agentId }, 'serving MCP on stdio');

  return new Promise((resolve) => {
    let stopping = false;
    const stop = (why: string, code: number): void => {
      if (stopping) return;
      stopping = true;
      log.info({ why }, 'stopping');
      session.close();
      void Promise.allSettled([server.close(), identity.close()]).then(() => resolve(code));
    };
    // The host ends the server by closing its standard input (or with a signal).
    transport.onclose = () => stop('stdin closed', 0);
    process.stdin.on('end', () => stop('stdin ended', 0));
    process.on('SIGTERM', () => stop('SIGTERM', 0));
    process.on('SIGINT', () => stop('SIGINT', 0));
    void participant.closed().then((result) => {
      if (result instanceof Error) {
        log.error({ err: result }, 'the identity stopped by itself');
        stop('identity stopped', 1);
      }
    });
    server.connect(transport).catch((err: unknown) => {
      log.error({ err }, 'MCP transport failed');
      stop('transport failed', 1);
    });
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`ag2net-mcp failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
