import { A2aAnswerTooLargeError, A2aHttpError } from './errors.js';

/** Options of `boundedFetch`. */
export interface BoundedFetchOptions {
  /** Headers added to every request (the configured credentials); they replace the SDK's of the same name. */
  readonly headers: Readonly<Record<string, string>>;
  /** Bytes of response bodies one fetch function accepts in all, before its body errors. */
  readonly maxBytes: number;
  /** The fetch underneath; default the global one. */
  readonly fetch?: typeof fetch;
}

/**
 * A `fetch` for the A2A SDK's transport: sends the configured headers, turns an HTTP error status into
 * `A2aHttpError` (the body, which may quote anything, is never read), and errors the body with
 * `A2aAnswerTooLargeError` once the bodies it returned total more than `maxBytes`, so that an endless or huge
 * answer is cut off instead of buffered. One per call: the count is never reset.
 */
export function boundedFetch(options: BoundedFetchOptions): typeof fetch {
  const inner = options.fetch ?? fetch;
  let received = 0;
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(options.headers)) headers.set(name, value);
    const response = await inner(input, { ...init, headers });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new A2aHttpError(response.status);
    }
    if (response.body === null) return response;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.byteLength;
          if (received > options.maxBytes) {
            controller.error(new A2aAnswerTooLargeError(options.maxBytes));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
