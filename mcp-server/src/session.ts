import type { Participant } from '@ag2net/client';
import { DEFAULT_INBOX_CAPACITY, InboxBuffer } from './inbox-buffer.js';
import type { Logger } from './log.js';

/** How many agent names a session remembers. */
const MAX_REMEMBERED_NAMES = 10_000;

/** Options of `startSession`. */
export interface SessionOptions {
  /** Most unread envelopes the inbox keeps; default `DEFAULT_INBOX_CAPACITY` (500). Ignored with `inbox`. */
  readonly inboxCapacity?: number;
  /**
   * An inbox the caller fills (from the identity's delivery handler: `connectIdentity`'s `onEnvelope`), which then
   * holds what waited while the identity was away too. Default: a new one filled from the participant's deliveries
   * from now on.
   */
  readonly inbox?: InboxBuffer;
  /** Where failures of the inbox pump go; default silent. */
  readonly logger?: Logger;
}

/**
 * One identity of the network as the MCP server acts for it: the participant, the deliveries it has not read yet,
 * and the names of the agents it met. Every MCP connection served for this identity shares it.
 */
export interface NetworkSession extends AsyncDisposable {
  readonly participant: Participant;
  readonly inbox: InboxBuffer;
  /** The name of an agent id met before, else the id. */
  readonly nameOf: (agentId: string) => string;
  /** Learns the names of `agentIds` not known yet (unknown ids stay ids). */
  readonly learnNames: (agentIds: Iterable<string>, signal?: AbortSignal) => Promise<void>;
  /** Stops filling the inbox; the participant stays connected (its owner disconnects it). Idempotent. */
  close(): void;
}

/** A session for `participant`: its inbox (filled by the caller, or from its deliveries from now on) and names. */
export function startSession(participant: Participant, options: SessionOptions = {}): NetworkSession {
  const inbox = options.inbox ?? new InboxBuffer(options.inboxCapacity ?? DEFAULT_INBOX_CAPACITY);
  const names = new Map<string, string>([[participant.agentId, participant.passport.name]]);
  const subscription =
    options.inbox === undefined
      ? participant.subscribe({ predicate: (e) => e.sender_id !== participant.agentId })
      : null;
  if (subscription !== null) {
    // The pump ends when the subscription closes (session closed, participant disconnected); it never rejects.
    void (async () => {
      try {
        for await (const envelope of subscription) inbox.push(envelope);
      } catch (err) {
        options.logger?.warn({ err }, 'inbox stopped');
      }
    })();
  }
  const remember = (id: string, name: string): void => {
    if (names.size >= MAX_REMEMBERED_NAMES) names.clear();
    names.set(id, name);
  };
  const close = (): void => subscription?.close();
  return {
    participant,
    inbox,
    nameOf: (agentId) => names.get(agentId) ?? agentId,
    learnNames: async (agentIds, signal) => {
      const unknown = [...new Set(agentIds)].filter((id) => !names.has(id));
      await Promise.all(
        unknown.map(async (id) => {
          try {
            remember(id, (await participant.hub.getAgent(id, signal === undefined ? {} : { signal })).name);
          } catch {
            // An id the directory does not know (unregistered since) is shown as itself.
          }
        }),
      );
    },
    close,
    [Symbol.asyncDispose]: () => {
      close();
      return Promise.resolve();
    },
  };
}
