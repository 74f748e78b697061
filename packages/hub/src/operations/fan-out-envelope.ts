import { DELIVERY_ORIGIN_HUB, DeliveryHeader } from '@ag2net/protocol/internal';
import type { Envelope } from '@ag2net/protocol';
import type { JsMsg } from '@nats-io/jetstream';
import { RequestError, TimeoutError, headers } from '@nats-io/transport-node';
import { OutboxUnreachableError } from '../nats/outbox.js';
import { deadLetter, type DeadLetter, type DeadLetterDeps } from './dead-letters.js';
import { auditFromWal, type WalAuditDeps } from './wal-records.js';
import { allowedRecipients, type RecipientDeps } from './fan-out.js';
import type { HubEnv, HubPolicies } from '../partition/hub-parts.js';

/** Attempts of one fan-out before it is dead-lettered. */
export const DELIVERY_ATTEMPTS = 5;
/** Pause after the first failed attempt, in ms; it doubles after each further one (100, 200, 400, 800). */
const FIRST_BACKOFF_MS = 100;
/** How long one inbox publish waits for its PubAck, ms (nats.js's JetStream default). */
const INBOX_PUBLISH_TIMEOUT_MS = 5_000;
/** How long a fan-out that cannot reach JetStream is retried before its failures count as attempts, ms. */
const UNREACHABLE_BUDGET_MS = 60_000;
/** Longest pause between two tries of a fan-out that cannot reach JetStream, ms. */
const UNREACHABLE_BACKOFF_MAX_MS = 1_000;

/** What a fan-out asks of the deliverer running it: whether it may go on, and pauses it cuts short when stopping. */
export interface FanOutGate {
  /** Not stopping, and holding the writer lease now: the fan-out goes on at once, without an await. */
  serving(): boolean;
  /**
   * Waits while the lease has lapsed (keeping `msg` from being redelivered meanwhile); true once it holds the lease
   * again, false once the deliverer stops.
   */
  mayGoOn(msg: JsMsg): Promise<boolean>;
  /** Waits `ms` unless the deliverer stops first; true when it waited the whole time. */
  pause(ms: number): Promise<boolean>;
}

/** What fanning an envelope out uses: its recipients, the inboxes, its audit records and the dead letters. */
export type FanOutDeps = RecipientDeps &
  Pick<HubPolicies, 'arbiter'> &
  Pick<HubEnv, 'outbox' | 'names'> &
  WalAuditDeps &
  DeadLetterDeps;

/** One WAL message to fan out, and the envelope it holds. */
export interface FanOutJob {
  readonly envelope: Envelope;
  readonly msg: JsMsg;
}

/**
 * Fans one envelope out and writes its audit records, retrying only what failed (inboxes that did not take it,
 * the audit records) with backoff; after `DELIVERY_ATTEMPTS` refusals it is dead-lettered. A failure that only says
 * JetStream could not be reached (a timeout, no responders: a stream electing a leader after a node died) is no
 * refusal: it is retried, backing off to `UNREACHABLE_BACKOFF_MAX_MS`, for `UNREACHABLE_BUDGET_MS` before it counts,
 * so a leader election never turns deliverable envelopes into dead letters. True when done, false when the hub
 * stopped first (the message stays unacked and is redelivered to the next active hub).
 */
export async function fanOutEnvelope(ctx: FanOutDeps, job: FanOutJob, gate: FanOutGate): Promise<boolean> {
  const { envelope, msg } = job;
  if (envelope.audience === null && ctx.partition.channels.get(envelope.channel_id) === undefined) {
    // A broadcast's audience is its channel's participants: with no channel there is nobody to send it to, and
    // acking it would lose it without a trace. The hub holding the lease knows every channel it admitted to.
    if (!gate.serving() && !(await gate.mayGoOn(msg))) return false;
    const letter = { envelope, streamSeq: msg.seq, recipients: [], reason: 'channel not known to the hub' };
    return park(ctx, { letter, msg }, gate);
  }
  let todo = await allowedRecipients(ctx, envelope);
  let audited = false;
  let reason = '';
  let unreachableSince: number | null = null;
  for (let attempt = 0, tries = 0; attempt < DELIVERY_ATTEMPTS; tries += 1) {
    if (!gate.serving() && !(await gate.mayGoOn(msg))) return false;
    if (tries > 0) {
      // Keep the server from redelivering a message that is still being worked on.
      msg.working();
      const pauseMs =
        unreachableSince === null
          ? FIRST_BACKOFF_MS * 2 ** Math.max(0, attempt - 1)
          : Math.min(UNREACHABLE_BACKOFF_MAX_MS, FIRST_BACKOFF_MS * 2 ** Math.min(tries - 1, 10));
      if (!(await gate.pause(pauseMs))) return false;
    }
    const failed = await publish(ctx, { envelope, msg }, todo);
    todo = failed.map((f) => f.recipient);
    reason = failed[0]?.reason ?? '';
    let unreachable = failed.length > 0 && failed.every((f) => f.unreachable);
    if (!audited) {
      try {
        await auditFromWal(ctx, envelope);
        audited = true;
      } catch (err) {
        reason ||= `audit: ${err instanceof Error ? err.message : String(err)}`;
        unreachable = (failed.length === 0 || unreachable) && isUnreachable(err);
      }
    }
    if (todo.length === 0 && audited) return true;
    if (unreachable) {
      const now = performance.now();
      unreachableSince ??= now;
      if (now - unreachableSince < UNREACHABLE_BUDGET_MS) {
        if (tries % 10 === 0) {
          ctx.logger.warn({ streamSeq: msg.seq, tries, reason }, 'JetStream unreachable for a fan-out; retrying');
        }
        continue;
      }
    }
    attempt += 1;
    ctx.logger.warn({ streamSeq: msg.seq, attempt, recipients: todo, reason }, 'delivery failed; retrying');
  }
  return park(ctx, { letter: { envelope, streamSeq: msg.seq, recipients: todo, reason }, msg }, gate);
}

/** Dead-letters a delivery, retrying the record's write; true once kept, false when the hub stopped first. */
async function park(
  ctx: DeadLetterDeps,
  parked: { readonly letter: DeadLetter; readonly msg: JsMsg },
  gate: FanOutGate,
): Promise<boolean> {
  const { letter, msg } = parked;
  for (let tries = 0; ; tries += 1) {
    if (!gate.serving() && !(await gate.mayGoOn(msg))) return false;
    try {
      await deadLetter(ctx, letter);
      return true;
    } catch (err) {
      // The dead letter is a write too; until it is kept, the message stays unacked and in the window.
      ctx.logger.warn({ err, streamSeq: msg.seq, tries }, 'writing a dead letter failed; retrying');
      msg.working();
      if (!(await gate.pause(Math.min(UNREACHABLE_BACKOFF_MAX_MS, FIRST_BACKOFF_MS * 2 ** Math.min(tries, 10)))))
        return false;
    }
  }
}

/** Publishes to each recipient's inbox; returns those whose inbox did not take it, with why. */
async function publish(
  ctx: Pick<HubEnv, 'outbox' | 'names'>,
  job: FanOutJob,
  recipients: readonly string[],
): Promise<{ recipient: string; reason: string; unreachable: boolean }[]> {
  const { envelope, msg } = job;
  const results = await Promise.allSettled(
    recipients.map((rid) => {
      // The origin mark clients require; a fresh header set per publish, since `msgID` is added to it.
      const h = headers();
      h.set(DeliveryHeader.Origin, DELIVERY_ORIGIN_HUB);
      return ctx.outbox.publishToStream(ctx.names.inbox(rid), msg.data, {
        msgId: `${envelope.envelope_id}.${rid}`,
        headers: h,
        timeoutMs: INBOX_PUBLISH_TIMEOUT_MS,
      });
    }),
  );
  const failed: { recipient: string; reason: string; unreachable: boolean }[] = [];
  results.forEach((result, i) => {
    const recipient = recipients[i];
    if (result.status === 'rejected' && recipient !== undefined) {
      const err: unknown = result.reason;
      failed.push({
        recipient,
        reason: err instanceof Error ? err.message : String(err),
        unreachable: isUnreachable(err),
      });
    }
  });
  return failed;
}

/**
 * The failure only says JetStream could not be reached now: a timeout, or no responders (nats.js reports those on a
 * JetStream subject as `JetStreamNotEnabled`), as while a stream elects a leader. A refusal the server did answer
 * (an inbox full, a rejected message) is not.
 */
function isUnreachable(err: unknown): boolean {
  if (err instanceof TimeoutError || err instanceof OutboxUnreachableError) return true;
  if (err instanceof RequestError) return err.isNoResponders() || err.cause instanceof TimeoutError;
  return err instanceof Error && err.name === 'JetStreamNotEnabled';
}
