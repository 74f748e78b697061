import type { ContextUpdates, Envelope } from '@ag2net/protocol';
import type { WorkflowState } from './types.js';

/**
 * Who may see what `envelope` carries: `null` for everyone (no audience), else its audience and its sender, sorted.
 */
export function readersOf(envelope: Pick<Envelope, 'sender_id' | 'audience'>): readonly string[] | null {
  if (envelope.audience === null) return null;
  return [...new Set([envelope.sender_id, ...envelope.audience])].sort();
}

/** The variables after `updates`: deletes first (missing keys ignored), then sets, in Python dict order. */
export function applyContextUpdates(
  vars: Readonly<Record<string, unknown>>,
  updates: ContextUpdates,
): Readonly<Record<string, unknown>> {
  // A Map keeps Python's dict semantics (an update keeps the key's position) and, unlike assigning into an
  // object, treats a key such as "__proto__" as data.
  const next = new Map(Object.entries(vars));
  for (const key of updates.delete) next.delete(key);
  for (const [key, value] of Object.entries(updates.set)) next.set(key, value);
  return Object.fromEntries(next);
}

/**
 * The state after `envelope`'s context `updates`, with the provenance `stateFor` needs: a variable that an envelope
 * with an audience set or deleted is marked with who may see its value now (the readers of every such envelope since
 * the variable was last written by an envelope without an audience: their intersection) and the value everyone else
 * last saw (`public_value`, absent when they saw no such variable). A write without an audience clears the mark.
 */
export function updateContext(state: WorkflowState, updates: ContextUpdates, envelope: Envelope): WorkflowState {
  const contextVars = applyContextUpdates(state.context_vars, updates);
  const readers = readersOf(envelope);
  const marks = new Map(Object.entries(state.private_context ?? {}));
  for (const key of new Set([...updates.delete, ...Object.keys(updates.set)])) {
    if (readers === null) {
      marks.delete(key);
      continue;
    }
    const mark = marks.get(key);
    if (mark !== undefined) {
      marks.set(key, { ...mark, readers: mark.readers.filter((id) => readers.includes(id)) });
    } else if (Object.hasOwn(state.context_vars, key)) {
      marks.set(key, { readers, public_value: state.context_vars[key] });
    } else {
      marks.set(key, { readers });
    }
  }
  const { private_context: _previous, ...rest } = state;
  return marks.size === 0
    ? { ...rest, context_vars: contextVars }
    : { ...rest, context_vars: contextVars, private_context: Object.fromEntries(marks) };
}

/**
 * The state as `participantId` may see it: each marked variable it may not read shows the value everyone else last
 * saw (or is absent), and the marks themselves (which name who saw what) are left out.
 */
export function workflowStateFor(state: WorkflowState, participantId: string): WorkflowState {
  const marks = state.private_context;
  if (marks === undefined) return state;
  const { private_context: _marks, ...rest } = state;
  const vars = new Map(Object.entries(state.context_vars));
  for (const [key, mark] of Object.entries(marks)) {
    if (mark.readers.includes(participantId)) continue;
    if (Object.hasOwn(mark, 'public_value')) vars.set(key, mark.public_value);
    else vars.delete(key);
  }
  return { ...rest, context_vars: Object.fromEntries(vars) };
}
