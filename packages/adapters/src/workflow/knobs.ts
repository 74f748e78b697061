import { repr } from '@ag2net/protocol/internal';
import { ProtocolError, type ChannelMetadata } from '@ag2net/protocol';
import { WorkflowGraphError } from './errors.js';
import type { GraphCache } from './graph-cache.js';
import type { TransitionGraph } from './graph.js';
import { isRecord } from './records.js';

/** `knobs.graph`, which must be a dict (a `TransitionGraph.toDict()`). Throws `ProtocolError` (AG2's message). */
export function graphKnob(metadata: ChannelMetadata): Readonly<Record<string, unknown>> {
  const data = metadata.knobs['graph'];
  if (!isRecord(data)) {
    throw new ProtocolError(
      "workflow requires knobs['graph'] as a dict — call TransitionGraph.to_dict() before passing",
    );
  }
  return data;
}

/**
 * The graph of `data`, or a `ProtocolError` `invalid workflow graph: …`. Unlike AG2, whose missing
 * `initial_speaker` escaped as a `KeyError`, every malformed graph ends up here.
 */
export function loadGraph(cache: GraphCache, data: Readonly<Record<string, unknown>>): TransitionGraph {
  try {
    return cache.load(data);
  } catch (err) {
    if (!(err instanceof WorkflowGraphError)) throw err;
    throw new ProtocolError(`invalid workflow graph: ${err.message}`, { cause: err });
  }
}

/** Throws unless the graph's initial speaker is one of `participants` (listed in the message as given). */
export function checkInitialSpeaker(graph: TransitionGraph, participants: readonly string[]): void {
  if (!participants.includes(graph.initialSpeaker)) {
    throw new ProtocolError(
      `workflow initial_speaker ${repr(graph.initialSpeaker)} not in participants ${repr(participants)}`,
    );
  }
}

/** `knobs.context_vars` (default `{}`), which must be a dict if present. Throws `ProtocolError`. */
export function contextVarsKnob(metadata: ChannelMetadata): Readonly<Record<string, unknown>> {
  if (!Object.hasOwn(metadata.knobs, 'context_vars')) return {};
  const vars = metadata.knobs['context_vars'];
  if (!isRecord(vars)) throw new ProtocolError("workflow knobs['context_vars'] must be a dict if provided");
  return { ...vars };
}
