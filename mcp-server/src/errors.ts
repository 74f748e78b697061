import { DisconnectedError, HubUnavailableError } from '@ag2net/client';
import { Ag2netError, ErrorCode, HubError } from '@ag2net/protocol';

/** The codes a tool error starts with: every code of `ERROR_CODES` (`timeout` and `cancelled` never cross the network). */
export const ToolErrorCode = ErrorCode;
export type ToolErrorCode = ErrorCode;

/** A tool refused or failed for a reason the caller can act on; its text goes to the model host. Local. */
export class ToolFailure extends Ag2netError {
  override readonly name = 'ToolFailure';
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
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
 * Normalizes anything a tool threw into a code and a line of text. A hub's refusal and a tool's own keep their stable
 * code and message; the client's local errors keep their code with a message of their own, or a fixed one (a local
 * error's text may name files or keys, so it goes to the log only); anything else is `internal` with a fixed message.
 */
export function toolErrorOf(err: unknown): ToolErrorText {
  const [code, message] = classify(err);
  const short =
    message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS - 1)}…` : message;
  return { code, text: `${code}: ${short}` };
}

const FAILED_INSIDE = 'the request failed inside the MCP server';

function classify(err: unknown): readonly [string, string] {
  if (err instanceof ToolFailure || err instanceof HubError) return [err.code, err.message];
  if (err instanceof HubUnavailableError) return [err.code, 'no hub answered'];
  if (err instanceof DisconnectedError) return [err.code, 'this identity is disconnected'];
  if (err instanceof Ag2netError) return [err.code, err.code === ErrorCode.Timeout ? err.message : FAILED_INSIDE];
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) {
    return err.name === 'TimeoutError'
      ? [ErrorCode.Timeout, 'the request timed out']
      : [ErrorCode.Cancelled, 'the request was cancelled'];
  }
  return [ErrorCode.Internal, FAILED_INSIDE];
}
