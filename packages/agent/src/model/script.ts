import { z } from 'zod';

/** One tool call a scripted model makes: the tool's name and its arguments. */
export const ScriptedToolCallSchema = z.strictObject({
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()).default({}),
});
export type ScriptedToolCall = z.infer<typeof ScriptedToolCallSchema>;
export type ScriptedToolCallInput = z.input<typeof ScriptedToolCallSchema>;

/**
 * One answer of a scripted model: a text reply, one tool call, or several tool calls made in the same step.
 * Each model call consumes one step; after a tool call the runtime calls the model again, which takes the next.
 */
export const ScriptStepSchema = z.union([z.string(), ScriptedToolCallSchema, z.array(ScriptedToolCallSchema).min(1)]);
export type ScriptStep = z.infer<typeof ScriptStepSchema>;
export type ScriptStepInput = z.input<typeof ScriptStepSchema>;

/** A tool-call step: `toolCall('delegate', { target: 'bob', prompt: 'what is 2+2?' })`. */
export function toolCall(tool: string, args: Record<string, unknown> = {}): ScriptedToolCall {
  return { tool, args };
}
