import type { TurnEvent } from '@ag2net/adapters';
import type { StepResult, ToolSet } from 'ai';

/** The parts of an AI SDK step that turn events are read from. */
export type StepContent = StepResult<ToolSet>['content'];

/**
 * The tool calls and results of an LLM turn, in emission order, as the adapters read them (`TurnEvent`). A tool
 * that threw becomes a result `Error: <message>`, the shape every network tool returns its failures in.
 */
export function turnEventsOf(steps: readonly { readonly content: StepContent }[]): TurnEvent[] {
  const events: TurnEvent[] = [];
  for (const step of steps) {
    for (const part of step.content) {
      switch (part.type) {
        case 'tool-call':
          events.push({
            type: 'tool_call',
            callId: part.toolCallId,
            name: part.toolName,
            // An invalid call keeps the model's unparsable text as its input.
            arguments:
              part.invalid === true && typeof part.input === 'string' ? part.input : JSON.stringify(part.input),
          });
          break;
        case 'tool-result':
          events.push({ type: 'tool_result', callId: part.toolCallId, result: part.output });
          break;
        case 'tool-error':
          events.push({ type: 'tool_result', callId: part.toolCallId, result: `Error: ${errorMessage(part.error)}` });
          break;
        default:
          break;
      }
    }
  }
  return events;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
