import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options of `startModelEndpoint`. */
export interface ModelEndpointOptions {
  /** The assistant's text in every completion it answers. */
  readonly content: string;
  /** The tokens every completion reports; default 312 prompt and 54 completion tokens. */
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
  /** How many first calls fail with 503 `overloaded`, a transient failure a model retries; default 1. */
  readonly failFirst?: number;
}

/** A running fake model endpoint. */
export interface ModelEndpoint {
  /** What an OpenAI-compatible model is given as `baseURL`: `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string;
  /** Calls received so far, the failed ones included. */
  calls(): number;
  /** Drops its connections and stops listening. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a fake OpenAI-compatible chat-completions endpoint on a free port of 127.0.0.1: whatever it is asked, it
 * fails the first `failFirst` calls with 503 and answers every later one with `content` and `usage` (model `fake-1`).
 */
export async function startModelEndpoint(options: ModelEndpointOptions): Promise<ModelEndpoint> {
  const failFirst = options.failFirst ?? 1;
  const usage = options.usage ?? { promptTokens: 312, completionTokens: 54 };
  let calls = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      const json = { 'content-type': 'application/json' };
      if (calls <= failFirst) {
        res.writeHead(503, json).end(JSON.stringify({ error: { message: 'overloaded' } }));
        return;
      }
      res.writeHead(200, json).end(
        JSON.stringify({
          id: `chatcmpl-${calls}`,
          object: 'chat.completion',
          created: 1767225600,
          model: 'fake-1',
          choices: [{ index: 0, message: { role: 'assistant', content: options.content }, finish_reason: 'stop' }],
          usage: {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.promptTokens + usage.completionTokens,
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // listen(0, host) always binds a TCP address, never a pipe name.
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
    return closed;
  };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A port of 127.0.0.1 that was free a moment ago and has nothing listening on it: an endpoint that refuses calls. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // listen(0, host) always binds a TCP address, never a pipe name.
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
