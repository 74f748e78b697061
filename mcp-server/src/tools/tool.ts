import { formatIssues } from '@ag2net/protocol/internal';
import { z } from 'zod';
import { ToolErrorCode, ToolFailure } from '../errors.js';
import type { Logger } from '../log.js';
import type { NetworkSession } from '../session.js';

/** What a tool acts with during one call. */
export interface ToolContext {
  readonly session: NetworkSession;
  /** Aborted when the MCP request is cancelled or its connection closes. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

/** A tool's answer: text for the model host, and the same as structured content when it is an object. */
export interface ToolOutput {
  readonly text: string;
  readonly structured?: Record<string, unknown>;
}

/** A network tool as its file defines it: a zod input schema and what it does with validated input. */
export interface ToolDefinition<TSchema extends z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly input: TSchema;
  /** Whether it only reads (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
  run(ctx: ToolContext, args: z.output<TSchema>): Promise<ToolOutput>;
}

/** A tool the server lists and calls: its JSON Schema, and a call that validates raw arguments first. */
export interface NetworkTool {
  readonly name: string;
  readonly description: string;
  readonly inputJsonSchema: Record<string, unknown>;
  readonly readOnly: boolean;
  /** Validates `raw` (`invalid_request` when it does not fit), then runs. Throws `ToolFailure` or network errors. */
  call(ctx: ToolContext, raw: unknown): Promise<ToolOutput>;
}

/** Wraps a definition so that arguments are validated by its schema before it runs. */
export function defineTool<TSchema extends z.ZodType>(definition: ToolDefinition<TSchema>): NetworkTool {
  const inputJsonSchema = z.toJSONSchema(definition.input, { io: 'input' });
  return {
    name: definition.name,
    description: definition.description,
    inputJsonSchema,
    readOnly: definition.readOnly,
    async call(ctx, raw) {
      const parsed = definition.input.safeParse(raw ?? {});
      if (!parsed.success) {
        throw new ToolFailure(
          ToolErrorCode.InvalidRequest,
          formatIssues(`invalid arguments for ${definition.name}`, parsed.error.issues),
        );
      }
      return definition.run(ctx, parsed.data);
    },
  };
}

/** A JSON answer: pretty text and the same object as structured content. */
export function jsonOutput(value: Record<string, unknown>): ToolOutput {
  return { text: JSON.stringify(value, null, 2), structured: value };
}
