import { ErrorReason, HubError } from './errors.js';

/**
 * Whether the same request may be sent again after the hub answered `error`: its code is retryable (`unavailable`:
 * the hub did nothing with it), unless it may have been applied (`details.reason` `may_have_applied`) and the
 * operation is not idempotent (`HUB_OPS[op].idempotent`). Every other wire error is final: sending the request again
 * gets the same answer. Both clients resend by this rule (conformance/fixtures/errors.json, `retry`).
 */
export function mayResend(error: HubError, options: { readonly idempotent: boolean }): boolean {
  if (!error.retryable) return false;
  return options.idempotent || error.details?.['reason'] !== ErrorReason.MayHaveApplied;
}

/**
 * Whether `error` is a wire error that a client would not resend for an operation that is not idempotent, as a turn
 * is not: every code but `unavailable` (`protocol_error` for a closed channel or a turn out of order, `not_found`,
 * `access_denied`, `auth_failed`, `invalid_request`, `conflict`, `inbox_full`, `internal`, a code of a newer hub),
 * and an `unavailable` that may have been applied. An agent does not run again a turn whose handler threw one: no
 * retry can change the hub's answer. Anything that is not a `HubError` (a timeout, no hub answering, a handler's
 * own exception) is not final.
 */
export function isFinalError(error: unknown): boolean {
  return error instanceof HubError && !mayResend(error, { idempotent: false });
}
