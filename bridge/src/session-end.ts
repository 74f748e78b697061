import { ErrorReason, HubError } from '@ag2net/protocol';

/**
 * Whether a hub call's error says the hub no longer serves the caller's identity: revoked by the operator,
 * unregistered (`access_denied`, reason `unknown_caller`), or its credentials replaced (`credentials_retired`). A
 * person's session is over then: the hub says so before NATS closes a revoked identity's connection.
 */
export function hubNoLongerServes(err: unknown): boolean {
  const reason = err instanceof HubError ? err.details?.['reason'] : undefined;
  return reason === ErrorReason.UnknownCaller || reason === ErrorReason.CredentialsRetired;
}
