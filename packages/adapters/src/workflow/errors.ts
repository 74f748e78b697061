import { formatIssues } from '@ag2net/protocol/internal';
import { ProtocolError } from '@ag2net/protocol';
import type { z } from 'zod';

/**
 * A transition graph could not be built: an unknown target or condition name, bad args, or a graph dict of the
 * wrong shape. It is a `ProtocolError`, so it crosses the wire with the code `protocol_error`.
 */
export class WorkflowGraphError extends ProtocolError {
  override readonly name: string = 'WorkflowGraphError';
}

/** Parses `value` with `schema`, or throws a `WorkflowGraphError` that says what `what` is and what is wrong. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new WorkflowGraphError(formatIssues(`invalid ${what}`, parsed.error.issues), { cause: parsed.error });
  return parsed.data;
}
