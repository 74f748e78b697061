import {
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_EXPECTATION_VIOLATED,
  isProtocolEvent,
  participantIds,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';

/** The marks of one admission check, in messages. */
export interface InboxMarks {
  /** At or past this estimate the count is asked of the agent's inbox consumer (`Infinity`: never). */
  readonly refreshAt: number;
  /** At or past this count, as the inbox consumer reported it, the inbox is under pressure (`Infinity`: never). */
  readonly highWater: number;
  /**
   * The inbox is shared with other partitions' counts (a partitioned prefix): what the consumer reports holds their
   * envelopes too, so a refreshed count is never less than it. Default false.
   */
  readonly shared?: boolean;
}

/** An agent's pending count as one check found it. */
export interface PendingCount {
  readonly pending: number;
  /**
   * True when this check found the inbox at or past its high-water mark by its consumer's own count and the inbox was
   * not under pressure before: the start of an episode, which ends when a check finds the inbox under the mark.
   */
  readonly pressureStarted: boolean;
}

/** The channel an envelope was admitted to: its participants, and its own per-agent tally (see `release`). */
export interface CountedChannel {
  readonly metadata: ChannelMetadata;
  readonly inboxAdmitted: Map<string, number>;
}

/** Reads an agent's inbox limits: `max_pending` and `high_water`, or `null` for an agent that is not registered. */
export type InboxLimitsOf = (agentId: string) => { maxPending: number; highWater: number | null } | null;

/** Reads how many messages wait in an agent's inbox now (its consumer's `num_pending + num_ack_pending`). */
export type ReadInboxDepth = (agentId: string) => Promise<number>;

/**
 * Inbox pending counts, behind `Rule.limits.inbox.max_pending`. The truth is the recipient's inbox consumer: a
 * message stops being pending when the recipient acks it (the inbox stream is a work queue), never because the
 * recipient posted something, so nobody can fill another's inbox by talking at it and nobody drains its own by
 * talking. Asking NATS at every post would cost a request per recipient, so the hub keeps an estimate:
 *
 * - `admitted`: content envelopes (not protocol events, not violation records) and invites addressed to the agent,
 *   folded from the WAL in admission order, live and on hydrate (so a standby's fold equals the live one);
 * - `consumed`: how many of those the agent had acked when the hub last asked its consumer (`pending`), plus the
 *   invites it answered since (an answer proves the invite was read); in memory, so a hub that starts knows only
 *   the answers it folds, which overestimates: the first check near the limit asks.
 *
 * The estimate is `admitted − consumed`. It only errs high between refreshes (acks since the last one are unseen),
 * so a check that finds it at or past the high-water mark asks the consumer before refusing anything.
 *
 * Only open channels count: when a channel ends, what it admitted to each agent is released (`release`), so the
 * counts do not grow with history and a hub that hydrates only open channels folds the same counts. What an ended
 * channel left unread in an inbox is then unseen, so a released agent is *unverified*: its next check asks its
 * consumer whatever the estimate says. A hub that hydrates marks every agent unverified (`distrustAll`).
 *
 * Pressure (`high_water`, AG2's `on_inbox_pressure`) is judged on the consumer's count only, never on the estimate:
 * the estimate does not see acks between refreshes, so an estimate at the mark says nothing about the inbox (a
 * recipient that acks everything would be reported every `high_water` envelopes). An episode starts when a refresh
 * finds the inbox at or past the mark and ends when a check finds it under the mark.
 */
export class InboxCounters {
  readonly #admitted = new Map<string, number>();
  readonly #consumed = new Map<string, number>();
  /** Agents whose estimate may be low since a channel of theirs ended (see the class comment). */
  readonly #unverified = new Set<string>();
  /** After `distrustAll`: every agent is unverified until it is asked; these were asked since. */
  #askedSinceDistrust: Set<string> | null = null;
  /** Agents whose inbox a refresh found at or past its high-water mark, until a check finds it under it. */
  readonly #pressed = new Set<string>();

  /** The agent's estimated pending count. */
  get(agentId: string): number {
    return Math.max(0, (this.#admitted.get(agentId) ?? 0) - (this.#consumed.get(agentId) ?? 0));
  }

  /**
   * The agent's pending count for an admission check: the estimate while it is under `marks.refreshAt`, else the
   * depth its inbox consumer reports now (and the estimate is reset to it). If NATS cannot answer, the estimate stands.
   */
  async pending(agentId: string, marks: InboxMarks, readDepth: ReadInboxDepth): Promise<PendingCount> {
    const estimate = this.get(agentId);
    if (estimate < marks.refreshAt && !this.#isUnverified(agentId)) {
      // The estimate errs high: under the mark, the inbox is under it too and an episode of pressure is over.
      if (estimate < marks.highWater) this.#pressed.delete(agentId);
      return { pending: estimate, pressureStarted: false };
    }
    const admittedBefore = this.#admitted.get(agentId) ?? 0;
    let depth: number;
    try {
      depth = await readDepth(agentId);
    } catch {
      return { pending: estimate, pressureStarted: false };
    }
    // Envelopes admitted while the request was out are not in `depth` yet, or are: either way they stay counted.
    this.#consumed.set(agentId, Math.max(0, admittedBefore - depth));
    this.#verified(agentId);
    const pending = marks.shared === true ? Math.max(this.get(agentId), depth) : this.get(agentId);
    return { pending, pressureStarted: this.#pressure(agentId, pending, marks.highWater) };
  }

  /** Notes a count the consumer confirmed; true when it starts an episode of pressure. */
  #pressure(agentId: string, pending: number, highWater: number): boolean {
    if (pending < highWater) {
      this.#pressed.delete(agentId);
      return false;
    }
    if (this.#pressed.has(agentId)) return false;
    this.#pressed.add(agentId);
    return true;
  }

  /** Counts an admitted envelope in its recipients' estimates (and an answered invite out of its answerer's). */
  count(envelope: Envelope, channel: CountedChannel, limitsOf: InboxLimitsOf): void {
    const { metadata, inboxAdmitted: tally } = channel;
    if (envelope.event_type === EV_CHANNEL_INVITE_ACK || envelope.event_type === EV_CHANNEL_INVITE_REJECT) {
      // An answered invite was read: it stops counting without waiting for the next refresh.
      const sender = envelope.sender_id;
      this.#consumed.set(sender, (this.#consumed.get(sender) ?? 0) + 1);
      return;
    }
    if (!countsAsPending(envelope)) return;
    for (const id of recipientsOfSubstantive(envelope, metadata)) {
      if (limitsOf(id) === null) continue;
      this.#admitted.set(id, (this.#admitted.get(id) ?? 0) + 1);
      tally.set(id, (tally.get(id) ?? 0) + 1);
    }
  }

  /** Counts what a channel admitted before its snapshot (`tally`, per agent), as `count` would have counted it. */
  add(tally: ReadonlyMap<string, number>): void {
    for (const [id, n] of tally) this.#admitted.set(id, (this.#admitted.get(id) ?? 0) + n);
  }

  /**
   * A channel ended: takes back what it admitted (`tally`, per agent, as `count` kept it) and marks those agents
   * unverified, since what the channel left unread in their inboxes is no longer counted.
   */
  release(tally: ReadonlyMap<string, number>): void {
    for (const [id, n] of tally) {
      const left = (this.#admitted.get(id) ?? 0) - n;
      if (left > 0) this.#admitted.set(id, left);
      else this.#admitted.delete(id);
      this.#unverified.add(id);
    }
  }

  /** Every agent's next check asks its consumer: a hydrated hub did not fold ended channels. */
  distrustAll(): void {
    this.#unverified.clear();
    this.#askedSinceDistrust = new Set();
  }

  #isUnverified(agentId: string): boolean {
    return this.#unverified.has(agentId) || this.#askedSinceDistrust?.has(agentId) === false;
  }

  #verified(agentId: string): void {
    this.#unverified.delete(agentId);
    this.#askedSinceDistrust?.add(agentId);
  }

  /** Forgets an agent (unregistered). */
  forget(agentId: string): void {
    this.#admitted.delete(agentId);
    this.#consumed.delete(agentId);
    this.#pressed.delete(agentId);
  }

  clear(): void {
    this.#admitted.clear();
    this.#consumed.clear();
    this.#unverified.clear();
    this.#askedSinceDistrust = null;
    this.#pressed.clear();
  }

  /**
   * The folded part, `admitted`, per agent in agent-id order: what live admission and hydrate agree on (what was
   * consumed is the inbox consumer's state, not the log's).
   */
  snapshot(): [string, number][] {
    return [...this.#admitted.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** The count at which the hub starts asking the consumer and logs inbox pressure: `high_water`, else 80 %. */
export function highWaterMark(maxPending: number, highWater: number | null): number {
  return highWater ?? Math.max(1, Math.floor(maxPending * 0.8));
}

/** True for what a client sends as content: not protocol events, not the hub's violation records. */
export function countsTowardInbox(envelope: Envelope): boolean {
  return !isProtocolEvent(envelope.event_type) && envelope.event_type !== EV_EXPECTATION_VIOLATED;
}

/** What an inbox's pending count counts: content, and invites (which wait for an answer like content does). */
export function countsAsPending(envelope: Envelope): boolean {
  return countsTowardInbox(envelope) || envelope.event_type === EV_CHANNEL_INVITE;
}

/** Who a substantive envelope is for: its audience, or every participant but the sender; each once. */
export function recipientsOfSubstantive(envelope: Envelope, metadata: ChannelMetadata): string[] {
  const ids = envelope.audience ?? participantIds(metadata);
  return [...new Set(ids)].filter((id) => id !== envelope.sender_id);
}
