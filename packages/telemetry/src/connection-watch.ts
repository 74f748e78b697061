/** The part of a NATS connection the watch reads (nats.js v3 `NatsConnection`). */
export interface WatchedConnection {
  isClosed(): boolean;
  status(): AsyncIterable<{ readonly type: string }>;
}

/** Whether a NATS connection is up now, as its status events say. */
export interface ConnectionWatch {
  /** True while connected: not closed, and no `disconnect` since the last `reconnect`. */
  connected(): boolean;
}

/**
 * Follows `nc`'s status events: a `disconnect` makes it not connected until a `reconnect`. nats.js keeps the
 * connection object across reconnects, so `isClosed()` alone would call a connection that is retrying connected.
 */
export function watchConnection(nc: WatchedConnection): ConnectionWatch {
  let up = true;
  void (async () => {
    try {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') up = false;
        else if (status.type === 'reconnect') up = true;
      }
    } catch {
      // The status stream ends with the connection; `isClosed()` answers from then on.
    }
  })();
  return { connected: () => up && !nc.isClosed() };
}
