/** HTTP helpers of the bridge tests: JSON calls with a bearer token, and a Server-Sent Events reader. */
import { request } from 'node:http';
import type { ReadableStreamReadResult } from 'node:stream/web';

export interface JsonReply {
  readonly status: number;
  readonly body: unknown;
}

/** Calls the bridge: `body` is sent as JSON; the answer is parsed as JSON. */
export async function call(
  base: string,
  path: string,
  init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonReply> {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
      ...init.headers,
    },
    ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

/**
 * Like `call`, on a connection of its own that is closed after the answer: for a request the bridge answers before
 * reading its whole body (413), whose connection must not carry the next request. `from` is the local address to
 * connect from (any of 127.0.0.0/8 reaches a bridge on 127.0.0.1): a client at another address.
 */
export function callOnce(
  base: string,
  path: string,
  init: { token?: string; body: string; contentType?: string; from?: string },
): Promise<JsonReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: 'POST',
        agent: false,
        ...(init.from === undefined ? {} : { localAddress: init.from }),
        headers: {
          'content-type': init.contentType ?? 'application/json',
          'content-length': Buffer.byteLength(init.body),
          ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text === '' ? null : (JSON.parse(text) as unknown) });
        });
        res.on('error', reject);
      },
    );
    // The bridge may answer and close before the body is all sent: the answer is what counts.
    req.on('error', reject);
    req.end(init.body);
  });
}

export interface SseEvent {
  readonly id: string | null;
  readonly event: string;
  readonly data: unknown;
}

/** An open Server-Sent Events stream: `next()` waits for the next event; `close()` disconnects. */
export interface SseStream {
  readonly status: number;
  next(timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

/** Opens a stream; a refused one (status ≠ 200) has its JSON body in `error`. */
export async function openSse(
  url: string,
  headers: Record<string, string>,
): Promise<SseStream & { readonly error: unknown }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  if (res.status !== 200 || res.body === null) {
    const text = await res.text();
    return {
      status: res.status,
      error: text === '' ? null : (JSON.parse(text) as unknown),
      next: () => Promise.reject(new Error('stream refused')),
      close: () => abort.abort(),
    };
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queued: SseEvent[] = [];
  // A read left pending by a timed-out wait is the next wait's: its chunk must not be lost.
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  const parse = (): void => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end < 0) return;
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | null = null;
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data !== '') queued.push({ id, event, data: JSON.parse(data) as unknown });
    }
  };
  return {
    status: 200,
    error: null,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (queued.length === 0) {
        if (Date.now() > deadline) throw new Error('no event in time');
        const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), deadline - Date.now()).unref());
        pending ??= reader.read();
        const chunk = await Promise.race([pending, timer]);
        if (chunk === 'timeout') throw new Error('no event in time');
        pending = null;
        if (chunk.done) throw new Error('stream ended');
        buffer += decoder.decode(chunk.value, { stream: true });
        parse();
      }
      const event = queued.shift();
      if (event === undefined) throw new Error('unreachable');
      return event;
    },
    close: () => abort.abort(),
  };
}
