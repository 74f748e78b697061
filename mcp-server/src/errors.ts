import { DisconnectedError, EnvelopeTimeoutError, HubUnavailableError } from '@ag2net/client';
import { ErrorCode, NetworkError } from '@ag2net/protocol';

/**
 * The codes a tool error starts with: the network's stable codes, plus `timeout` (a wait ran out) and `cancelled`
 * (the request was cancelled), which never cross the network.
 */
export const ToolErrorCode = {
  ...ErrorCode,
  Timeout: 'timeout',
  Cancelled: 'cancelled',
} as const;
export type ToolErrorCode = (typeof ToolErrorCode)[keyof typeof ToolErrorCode];

/** A tool refused or failed for a reason the caller can act on; its text goes to the model host. Local. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
  constructor(
    readonly code: ToolErrorCode | (string & {}),
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What a tool call answers with when it failed: `code: message`, never a stack, never a credential. */
export interface ToolErrorText {
  readonly code: string;
  readonly text: string;
}

/** The longest message a tool error carries, in characters: hub messages can quote long inputs. */
const MAX_ERROR_MESSAGE_CHARS = 500;

/**
 * Normalizes anything a tool threw into a code and a line of text. Network errors keep their stable code and the
 * hub's message; local errors of the client get their own code; anything else is `internal` with a fixed message
 * (its details may name files or keys, so they go to the log only).
 */
export function toolErrorOf(err: unknown): ToolErrorText {
  const [code, message] = classify(err);
  const short =
    message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS - 1)}…` : message;
  return { code, text: `${code}: ${short}` };
}

function classify(err: unknown): readonly [string, string] {
  if (err instanceof ToolFailure) return [err.code, err.message];
  if (err instanceof NetworkError) return [err.code, err.message];
  if (err instanceof EnvelopeTimeoutError) return [ToolErrorCode.Timeout, err.message];
  if (err instanceof HubUnavailableError) return [ToolErrorCode.Unavailable, 'no hub answered'];
  if (err instanceof DisconnectedError) return [ToolErrorCode.Unavailable, 'this identity is disconnected'];
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) {
    return err.name === 'TimeoutError'
      ? [ToolErrorCode.Timeout, 'the request timed out']
      : [ToolErrorCode.Cancelled, 'the request was cancelled'];
  }
  return [ToolErrorCode.Internal, 'the request failed inside the MCP server'];
}
