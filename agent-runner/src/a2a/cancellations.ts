/**
 * The `CancelTask` requests a runner has sent and not yet seen answered, so that it can wait for them before it
 * exits: a turn aborted at shutdown is let go at once (its delivery goes back), and the process would otherwise end
 * before the remote agent was told.
 */
export interface Cancellations {
  /** Keeps `sent` until it settles; it must never reject. */
  track(sent: Promise<void>): void;
  /** Resolves once every tracked request has settled (each is bounded by its own timeout). */
  settled(): Promise<void>;
}

export function createCancellations(): Cancellations {
  const pending = new Set<Promise<void>>();
  return {
    track: (sent) => {
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    },
    settled: async () => {
      while (pending.size > 0) await Promise.all(pending);
    },
  };
}
