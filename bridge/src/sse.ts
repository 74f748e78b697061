import type { ServerResponse } from 'node:http';
import { once } from 'node:events';

/** A comment line sent this often keeps proxies from closing an idle stream, in ms. */
export const SSE_KEEPALIVE_MS = 15_000;

/** One Server-Sent Events response: events written in order, waiting for the socket to drain when it is full. */
export class SseWriter {
  readonly #res: ServerResponse;
  readonly #keepalive: NodeJS.Timeout;

  constructor(res: ServerResponse) {
    this.#res = res;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    this.#keepalive = setInterval(() => res.write(': keepalive\n\n'), SSE_KEEPALIVE_MS);
    this.#keepalive.unref();
  }

  /** Writes one event; `data` is sent as one line of JSON. */
  async send(event: { readonly id?: string; readonly event: string; readonly data: unknown }): Promise<void> {
    const lines = [
      ...(event.id === undefined ? [] : [`id: ${event.id}`]),
      `event: ${event.event}`,
      `data: ${JSON.stringify(event.data)}`,
    ];
    if (!this.#res.write(`${lines.join('\n')}\n\n`) && !this.#res.destroyed) await once(this.#res, 'drain');
  }

  end(): void {
    clearInterval(this.#keepalive);
    if (!this.#res.writableEnded) this.#res.end();
  }
}
