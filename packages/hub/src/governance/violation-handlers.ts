import { BuiltinHandler } from './handler-names.js';

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
 * `expectation_violated` audit record — and then `handle` runs, once. `handle` is not run again after a hub
 * failover (the record is what fired); its errors are logged and swallowed, as AG2 does.
 */
export interface ViolationHandler {
  readonly name: string;
  readonly notify: ViolationNotice;
  handle?(violation: FiredViolation): void | Promise<void>;
}

/**
 * The five built-in handlers. `auto_close` (the hub closes the channel) and `hide` (the adapter folds the record)
 * act through the record itself, so their effect survives a failover.
 */
export const BUILTIN_HANDLERS: readonly ViolationHandler[] = Object.freeze([
  { name: BuiltinHandler.Audit, notify: 'nobody' },
  { name: BuiltinHandler.NotifyChannel, notify: 'channel' },
  { name: BuiltinHandler.Warn, notify: 'violators' },
  { name: BuiltinHandler.AutoClose, notify: 'nobody' },
  { name: BuiltinHandler.Hide, notify: 'violators' },
]);
