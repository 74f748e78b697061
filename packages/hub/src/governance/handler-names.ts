/** The names of the built-in violation handlers, as manifests write them in `on_violation`. */
export const BuiltinHandler = {
  /** Records the violation in the audit trail only. */
  Audit: 'audit',
  /** Also tells every participant with an `ag2.expectation.violated` envelope. */
  NotifyChannel: 'notify_channel',
  /** Also tells the violators (every participant for a channel-wide violation). */
  Warn: 'warn',
  /** Closes the channel with `expectation_violated:<name>`. */
  AutoClose: 'auto_close',
  /** Takes the violators out of the turn rotation until they speak again; tells them. */
  Hide: 'hide',
} as const;
export type BuiltinHandler = (typeof BuiltinHandler)[keyof typeof BuiltinHandler];
