import type { ModelMessage } from 'ai';
import type { ViewEvent } from './types.js';

/**
 * A projection as AI SDK messages: others' messages as `user`, the participant's own as `assistant`, a summary
 * as `system` (`Agent.ask` moves system messages into the system prompt, where every provider accepts them).
 */
export function toModelMessages(events: readonly ViewEvent[]): ModelMessage[] {
  return events.map((event): ModelMessage => {
    switch (event.kind) {
      case 'request':
        return { role: 'user', content: event.text };
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
