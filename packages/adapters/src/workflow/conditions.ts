import { repr } from '@ag2net/protocol/internal';
import { EV_PACKET, type Envelope } from '@ag2net/protocol';
import { z } from 'zod';
import { parseOrThrow } from './errors.js';
import { isRecord, pythonEquals } from './records.js';
import type { TransitionCondition, WorkflowState } from './types.js';

function argsOf<T extends z.ZodType>(schema: T, args: unknown, name: string): z.output<T> {
  return parseOrThrow(schema, args, `args for transition condition ${repr(name)}`);
}

/** `always`: fires on every envelope. */
export class Always implements TransitionCondition {
  readonly name = 'always';

  static fromArgs(args: Readonly<Record<string, unknown>>): Always {
    argsOf(z.strictObject({}), args, 'always');
    return new Always();
  }

  args(): Record<string, unknown> {
    return {};
  }

  evaluate(): boolean {
    return true;
  }
}

const AgentArgsSchema = z.strictObject({ agent_id: z.string() });

/** `from_speaker`: fires when the envelope was sent by `agentId`. */
export class FromSpeaker implements TransitionCondition {
  readonly name = 'from_speaker';
  constructor(readonly agentId: string) {}

  static fromArgs(args: Readonly<Record<string, unknown>>): FromSpeaker {
    return new FromSpeaker(argsOf(AgentArgsSchema, args, 'from_speaker').agent_id);
  }

  args(): Record<string, unknown> {
    return { agent_id: this.agentId };
  }

  evaluate(_state: WorkflowState, envelope: Envelope): boolean {
    return envelope.sender_id === this.agentId;
  }
}

const ToolArgsSchema = z.strictObject({ tool_name: z.string() });

/** `tool_called`: fires on an `EV_PACKET` whose `routing.tool` is `toolName`; never on `EV_TEXT`. */
export class ToolCalled implements TransitionCondition {
  readonly name = 'tool_called';
  constructor(readonly toolName: string) {}

  static fromArgs(args: Readonly<Record<string, unknown>>): ToolCalled {
    return new ToolCalled(argsOf(ToolArgsSchema, args, 'tool_called').tool_name);
  }

  args(): Record<string, unknown> {
    return { tool_name: this.toolName };
  }

  evaluate(_state: WorkflowState, envelope: Envelope): boolean {
    if (envelope.event_type !== EV_PACKET) return false;
    const routing = envelope.event_data['routing'];
    return isRecord(routing) && routing['tool'] === this.toolName;
  }
}

const ContextArgsSchema = z.strictObject({
  key: z.string(),
  value: z.unknown().refine((v) => v !== undefined, {
    message: 'Invalid input: expected a value (null matches a missing key), received undefined',
  }),
});

/**
 * `context_equals`: fires when `context_vars[key]` equals `value` by Python's `==` (deep for lists and dicts,
 * `true == 1`), so a graph routes the same under AG2 and here. A missing key equals `null`.
 */
export class ContextEquals implements TransitionCondition {
  readonly name = 'context_equals';
  /** The value to compare with; `undefined` is stored as `null` (Python's `None`). */
  readonly value: unknown;

  constructor(
    readonly key: string,
    value: unknown,
  ) {
    this.value = value === undefined ? null : value;
  }

  static fromArgs(args: Readonly<Record<string, unknown>>): ContextEquals {
    const parsed = argsOf(ContextArgsSchema, args, 'context_equals');
    return new ContextEquals(parsed.key, parsed.value);
  }

  args(): Record<string, unknown> {
    return { key: this.key, value: this.value };
  }

  evaluate(state: WorkflowState): boolean {
    const vars = state.context_vars;
    return pythonEquals(Object.hasOwn(vars, this.key) ? vars[this.key] : null, this.value);
  }
}
