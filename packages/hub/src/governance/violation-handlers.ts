import { ViolationHandlerName } from '@ag2net/protocol';
import { AuditKind } from '@ag2net/protocol';
import type { AuditLog } from '../audit/audit-log.js';
import type { Logger } from '../base/logger.js';

/** How long a user handler may take before the hub gives up waiting for it, in ms (wall clock). */
export const VIOLATION_HANDLER_TIMEOUT_MS = 10_000;

/** Who receives a violation record: nobody (the audit trail has it), every participant, or the violators. */
export type ViolationNotice = 'nobody' | 'channel' | 'violators';

/** A violation as it fired: what a custom handler is told. */
export interface FiredViolation {
  readonly channel_id: string;
  readonly expectation: string;
  readonly on_violation: string;
  readonly violators: readonly string[];
  readonly detail: Readonly<Record<string, unknown>>;
  /** The id of the `ag2.expectation.violated` record in the channel's log. */
  readonly envelope_id: string;
}

/**
 * What happens when an expectation breaks (`name` is what manifests write in `on_violation`). Every violation is
 * first recorded — an `ag2.expectation.violated` envelope in the channel's log, delivered as `notify` says, and an
 * `expectation_violated` audit record — and then `handle` runs, once, outside the channel's lock. `handle` is not
 * run again after a hub failover (the record is what fired). Its failure (a throw, a rejection, or not settling
 * within `timeoutMs`) is logged and audited as `violation_handler_failed`, never retried, and never blocks the channel.
 */
export interface ViolationHandler {
  readonly name: string;
  readonly notify: ViolationNotice;
  handle?(violation: FiredViolation): void | Promise<void>;
  /** How long `handle` may take, in ms; default `VIOLATION_HANDLER_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
}

/**
 * Runs a user handler with its timeout. Never throws: a failure is logged and audited (id derived from the
 * violation record, so a repeat is stored once).
 */
export async function runUserHandler(
  // Only what it uses of the hub context: the context holds the handler registry, so naming it here would be a cycle.
  ctx: { readonly logger: Logger; readonly audit: AuditLog },
  handler: ViolationHandler,
  fired: FiredViolation,
): Promise<void> {
  const timeoutMs = handler.timeoutMs ?? VIOLATION_HANDLER_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    // Called now, so its synchronous part runs before the caller goes on; a synchronous throw lands below.
    const running = Promise.resolve(handler.handle?.(fired));
    await Promise.race([running, timedOut]);
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).slice(0, 500);
    ctx.logger.warn({ err, channelId: fired.channel_id, handler: handler.name }, 'violation handler failed');
    await ctx.audit.recordAfter(
      AuditKind.ViolationHandlerFailed,
      {
        channel_id: fired.channel_id,
        expectation: fired.expectation,
        handler: handler.name,
        envelope_id: fired.envelope_id,
        reason,
      },
      { id: `violation_handler_failed.${fired.envelope_id}` },
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The five built-in handlers. `auto_close` (the hub closes the channel) and `hide` (the adapter folds the record)
 * act through the record itself, so their effect survives a failover.
 */
export const BUILTIN_HANDLERS: readonly ViolationHandler[] = Object.freeze([
  { name: ViolationHandlerName.Audit, notify: 'nobody' },
  { name: ViolationHandlerName.NotifyChannel, notify: 'channel' },
  { name: ViolationHandlerName.Warn, notify: 'violators' },
  { name: ViolationHandlerName.AutoClose, notify: 'nobody' },
  { name: ViolationHandlerName.Hide, notify: 'violators' },
]);
