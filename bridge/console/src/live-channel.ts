import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type Api } from './api.js';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import { expiredAtOf } from './logic/history.js';
import { foldEnvelopes } from './logic/live.js';
import { stateAfterLog } from './logic/turn.js';
import { envelopeOfEvent, streamError } from './stream.js';

/** A safety read of the metadata and adapter state, in ms, should the stream have missed something. */
const SAFETY_READ_MS = 30_000;

/** One channel as its page shows it: everything from one stream of its log. */
export interface LiveChannel {
  /** The metadata last read, with every lifecycle event of the log folded in; `null` until the first read. */
  readonly channel: ChannelMetadata | null;
  /** The adapter state last read, caught up with the log where the log says it (`null`: not visible). */
  readonly state: Readonly<Record<string, unknown>> | null;
  /** The transcript so far, in sequence order. */
  readonly envelopes: readonly Envelope[];
  /**
   * When the channel's history expired (the hub's retention removed its log): its metadata's `expired_at`, or what a
   * refused read said; `null` while it is kept. There is then no transcript and no adapter state to show.
   */
  readonly expiredAt: string | null;
  /** Reads the metadata and the adapter state again (after a post, say); runs after one in flight. */
  readonly refresh: () => Promise<void>;
}

/**
 * Follows a channel: its log live from the first envelope (`EventSource` resumes after a drop with `Last-Event-ID`),
 * and the metadata and adapter state read at once and again on each envelope. The header, the transcript and the
 * turns all read this one value: a lifecycle event changes the header on the render that shows it in the transcript,
 * before any read answers. `onError` is told every failure (a refused stream with the bridge's own refusal), but for
 * the refusal of a channel whose history expired, which `expiredAt` says instead.
 */
export function useLiveChannel(options: {
  readonly api: Api;
  readonly channelId: string;
  readonly onError: (err: unknown) => void;
  /** Told the ids an envelope names (its sender, audience, violators), to learn their names. */
  readonly onIds: (ids: readonly string[]) => void;
}): LiveChannel {
  const { api, channelId: id } = options;
  const [read, setRead] = useState<ChannelMetadata | null>(null);
  const [adapterState, setAdapterState] = useState<Record<string, unknown> | null>(null);
  const [bySequence, setBySequence] = useState<ReadonlyMap<number, Envelope>>(new Map());
  const [refusedAt, setRefusedAt] = useState<string | null>(null);
  // The handlers outlive a render: they reach the newest callbacks through a ref.
  const callbacks = useRef(options);
  callbacks.current = options;

  // One read at a time; an envelope arriving during a read asks for another after it, so none is dropped.
  const running = useRef<Promise<void> | null>(null);
  const again = useRef(false);
  const refresh = useCallback((): Promise<void> => {
    if (running.current !== null) {
      again.current = true;
      return running.current;
    }
    const run = async (): Promise<void> => {
      do {
        again.current = false;
        try {
          // A channel whose history expired has no adapter state left: its metadata says why (`expired_at`).
          const state = api.channelState(id).catch((err: unknown) => {
            if (err instanceof ApiError && expiredAtOf(err) !== null) return { state: null };
            throw err;
          });
          const [meta, adapter] = await Promise.all([api.channel(id), state]);
          setRead(meta.channel);
          setAdapterState(adapter.state);
          callbacks.current.onIds(meta.channel.participants.map((p) => p.agent_id));
        } catch (err) {
          callbacks.current.onError(err);
        }
      } while (again.current);
    };
    running.current = run().finally(() => {
      running.current = null;
    });
    return running.current;
  }, [api, id]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), SAFETY_READ_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  useEffect(() => {
    const path = `/v1/channels/${encodeURIComponent(id)}/stream`;
    const source = new EventSource(api.streamUrl(path, { since: 1 }));
    let stopped = false;
    let opened = false;
    source.addEventListener('open', () => {
      // After a reconnection the metadata may have moved while the stream was down.
      if (opened) void refresh();
      opened = true;
    });
    source.addEventListener('envelope', (event) => {
      const envelope = envelopeOfEvent(event);
      if (envelope?.sequence === undefined) return;
      const sequence = envelope.sequence;
      setBySequence((m) => (m.has(sequence) ? m : new Map(m).set(sequence, envelope)));
      const violators = envelope.event_data['violators'];
      callbacks.current.onIds([
        envelope.sender_id,
        ...(envelope.audience ?? []),
        ...(Array.isArray(violators) ? violators.filter((v: unknown): v is string => typeof v === 'string') : []),
      ]);
      void refresh();
    });
    // The history expired (before the page opened, or while it followed the log): no transcript to follow any more.
    const expired = (at: string): void => {
      source.close();
      setRefusedAt(at);
      void refresh();
    };
    source.addEventListener('error', (event) => {
      const failure = streamError(event);
      const failedExpired = expiredAtOf(failure);
      if (failedExpired !== null) expired(failedExpired);
      else if (failure !== null) callbacks.current.onError(new ApiError({ ...failure, status: 0 }));
      else if (source.readyState === EventSource.CLOSED) {
        // Refused before it started (say, not_found to a non-participant): show the refusal itself.
        void api.streamRefusal(path, { since: 1 }).then((refusal) => {
          if (stopped) return;
          const refusedExpired = expiredAtOf(refusal);
          if (refusedExpired !== null) {
            expired(refusedExpired);
            return;
          }
          const { code, message } = refusal ?? {
            code: 'unavailable',
            message: 'the live transcript stopped; reload the page to follow it again',
          };
          callbacks.current.onError(new ApiError({ code, message, status: 0 }));
        });
      }
    });
    return () => {
      stopped = true;
      source.close();
    };
  }, [api, id, refresh]);

  const envelopes = useMemo(
    () => [...bySequence.values()].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0)),
    [bySequence],
  );
  const channel = useMemo(() => (read === null ? null : foldEnvelopes(read, envelopes)), [read, envelopes]);
  const state = useMemo(
    () => (channel === null ? adapterState : stateAfterLog(channel, adapterState, envelopes)),
    [channel, adapterState, envelopes],
  );
  const expiredAt = read?.expired_at ?? refusedAt;
  return { channel, state, envelopes, expiredAt, refresh };
}
