import { FinishSchema, HandoffSchema, type PacketRouting } from '@ag2net/protocol';
import type { TurnEvent } from '../types.js';
import { ToolCalled } from './conditions.js';
import type { TransitionGraph } from './graph.js';
import { isRecord } from './records.js';

/**
 * AG2's `_resolve_routing`: the `routing` of the packet that ends an LLM turn, from the turn's tool events.
 *
 * Tool calls are walked in emission order and the first that steers wins: a call whose result is a `Finish` →
 * `{kind: 'finish', tool, reason, summary}`; a call whose result is a `Handoff` → `{kind: 'handoff', tool, reason,
 * target}` with the target name resolved through `nameToId` (unknown names pass through); a call whose name a
 * `ToolCalled` rule of the graph watches → `{kind: 'handoff', tool, reason}` (reason from the call's JSON
 * arguments, else `""`), leaving the target to the graph at fold. Otherwise, or without a graph, `{kind: 'text'}`.
 * Results without a call and results that are neither `Handoff` nor `Finish` are ignored.
 */
export function resolveRouting(
  events: readonly TurnEvent[],
  graph: TransitionGraph | null,
  nameToId: ReadonlyMap<string, string>,
): PacketRouting {
  if (graph === null) return { kind: 'text' };
  const watched = new Set<string>();
  for (const transition of graph.transitions) {
    if (transition.when instanceof ToolCalled) watched.add(transition.when.toolName);
  }
  const results = new Map<string, unknown>();
  for (const event of events) {
    if (event.type === 'tool_result') results.set(event.callId, event.result);
  }
  for (const call of events) {
    if (call.type !== 'tool_call') continue;
    const result = results.get(call.callId);
    const finish = FinishSchema.safeParse(result);
    if (finish.success) {
      return { kind: 'finish', tool: call.name, reason: finish.data.reason, summary: finish.data.summary };
    }
    const handoff = HandoffSchema.safeParse(result);
    if (handoff.success) {
      const target = nameToId.get(handoff.data.target) ?? handoff.data.target;
      return { kind: 'handoff', tool: call.name, reason: handoff.data.reason, target };
    }
    if (watched.has(call.name)) return { kind: 'handoff', tool: call.name, reason: callReason(call.arguments) };
  }
  return { kind: 'text' };
}

/** The string `reason` of a call's JSON arguments, else `""`. */
function callReason(args: string): string {
  if (args === '') return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return '';
  }
  if (!isRecord(parsed)) return '';
  const reason = parsed['reason'];
  return typeof reason === 'string' ? reason : '';
}
