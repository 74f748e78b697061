import {
  EV_EXPECTATION_VIOLATED,
  isProtocolEvent,
  participantIds,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';

/** An agent whose pending count crossed its inbox's high-water mark. */
export interface InboxPressure {
  readonly agentId: string;
  readonly pending: number;
}

/** Reads an agent's inbox limits: `max_pending` and `high_water`, or `null` for an agent that is not registered. */
export type InboxLimitsOf = (agentId: string) => { maxPending: number; highWater: number | null } | null;

/**
 * AG2's inbox pending counts, behind `Rule.limits.inbox.max_pending`: each substantive envelope an agent posts takes
 * one off its count, and each one addressed to it adds one. Substantive means sent by a client: not a protocol event
 * and not a violation record. The counts are folded from the WAL in admission order, live and on hydrate, so a
 * standby resumes with the same counts (AG2 lost them on restart).
 */
export class InboxCounters {
  readonly #pending = new Map<string, number>();

  /** The agent's pending count. */
  get(agentId: string): number {
    return this.#pending.get(agentId) ?? 0;
  }

  /**
   * Counts an admitted envelope; returns the recipients whose count just reached their high-water mark
   * (`high_water`, else 80 % of `max_pending`; AG2's `on_inbox_pressure`).
   */
  count(envelope: Envelope, metadata: ChannelMetadata, limitsOf: InboxLimitsOf): InboxPressure[] {
    if (!countsTowardInbox(envelope)) return [];
    const sender = envelope.sender_id;
    const own = this.get(sender);
    if (own > 1) this.#pending.set(sender, own - 1);
    else this.#pending.delete(sender);
    const pressure: InboxPressure[] = [];
    for (const id of recipientsOfSubstantive(envelope, metadata)) {
      const limits = limitsOf(id);
      if (limits === null) continue;
      const before = this.get(id);
      this.#pending.set(id, before + 1);
      const mark = limits.highWater ?? Math.max(1, Math.floor(limits.maxPending * 0.8));
      if (limits.maxPending > 0 && mark > 0 && before < mark && mark <= before + 1) {
        pressure.push({ agentId: id, pending: before + 1 });
      }
    }
    return pressure;
  }

  /** Forgets an agent (unregistered). */
  forget(agentId: string): void {
    this.#pending.delete(agentId);
  }

  clear(): void {
    this.#pending.clear();
  }

  /** The non-zero counts in agent-id order. */
  snapshot(): [string, number][] {
    return [...this.#pending.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** True for what a client sends as content: not protocol events, not the hub's violation records. */
export function countsTowardInbox(envelope: Envelope): boolean {
  return !isProtocolEvent(envelope.event_type) && envelope.event_type !== EV_EXPECTATION_VIOLATED;
}

/** Who a substantive envelope is for: its audience, or every participant but the sender; each once. */
export function recipientsOfSubstantive(envelope: Envelope, metadata: ChannelMetadata): string[] {
  const ids = envelope.audience ?? participantIds(metadata);
  return [...new Set(ids)].filter((id) => id !== envelope.sender_id);
}
