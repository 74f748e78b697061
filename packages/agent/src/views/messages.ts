import type { Part } from '@ag2net/protocol';
import type { ModelMessage, TextPart, UserContent } from 'ai';
import type { ViewEvent } from './types.js';

/**
 * Parts as a user message's content: one text part as plain text; more parts (or data) as one content part each, a
 * data part as its JSON (AG2's `DataInput`), since models read data as text.
 */
export function userContent(parts: readonly Part[]): UserContent {
  const only = parts[0];
  if (parts.length === 1 && only?.kind === 'text') return only.text;
  return parts.map((part): TextPart => ({
    type: 'text',
    text: part.kind === 'text' ? part.text : JSON.stringify(part.data),
  }));
}

/**
 * A projection as AI SDK messages: others' messages as `user`, the participant's own as `assistant`, a summary
 * as `system` (`Agent.ask` moves system messages into the system prompt, where every provider accepts them).
 */
export function toModelMessages(events: readonly ViewEvent[]): ModelMessage[] {
  return events.map((event): ModelMessage => {
    switch (event.kind) {
      case 'request':
        return { role: 'user', content: userContent(event.parts ?? [{ kind: 'text', text: event.text }]) };
      case 'message':
        return { role: 'assistant', content: event.text };
      case 'summary':
        return { role: 'system', content: event.summary };
      default:
        return unknownEvent(event);
    }
  });
}

function unknownEvent(event: never): never {
  throw new TypeError(`unknown view event: ${JSON.stringify(event)}`);
}
