import {
  createTransitionRegistry,
  TransitionGraphDictSchema,
  type TransitionGraphDict,
  type TransitionSpec,
} from '@ag2net/adapters';
import type { z } from 'zod';

// The check the New channel form runs on a workflow graph before it opens the channel: AG2's
// `TransitionGraph.to_dict()` form read as the hub's workflow adapter reads it (`TransitionGraphDictSchema`, then each
// condition and target built by the built-in transition registry), so a graph the hub would refuse is refused here,
// with a sentence saying what to fix.

/** A graph dict with AG2's defaults applied. */
export type CheckedGraph = TransitionGraphDict;

/** The conditions and targets a graph may name: the built-in ones, as the hub's workflow adapter has them. */
const REGISTRY = createTransitionRegistry();

/** What the check needs of the channel about to open. */
export interface GraphCheckContext {
  /**
   * The agent id a graph's speaker stands for: `you`, a name of the directory, or an id. `null` when it names
   * nobody the console knows.
   */
  readonly resolve: (nameOrId: string) => string | null;
  /** The ids of the channel's participants: the person and the agents invited. */
  readonly participants: readonly string[];
  /** How a problem names an agent id. */
  readonly nameOf: (id: string) => string;
}

export type GraphCheck =
  { readonly ok: true; readonly graph: CheckedGraph } | { readonly ok: false; readonly problems: readonly string[] };

function issuesOf(error: z.ZodError, where: string): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return `${where}${path === '' ? '' : `.${path}`}: ${issue.message}`;
  });
}

function checkSpec(spec: TransitionSpec, kind: 'condition' | 'target', where: string): string[] {
  const names = kind === 'condition' ? REGISTRY.conditionNames() : REGISTRY.targetNames();
  if (!names.includes(spec.name)) return [`${where}: no ${kind} named '${spec.name}' (known: ${names.join(', ')})`];
  try {
    if (kind === 'condition') REGISTRY.buildCondition(spec.name, spec.args);
    else REGISTRY.buildTarget(spec.name, spec.args);
    return [];
  } catch (err) {
    return [`${where}: ${err instanceof Error ? err.message : String(err)}`];
  }
}

/**
 * Reads `input` (JSON text or a value) as a workflow graph for a channel of `context.participants`: the dict's shape,
 * each condition and target by name with its args, and every speaker it names (`initial_speaker`, `from_speaker`,
 * `agent`) one of the participants. Speakers may be written as `you`, names or ids: the graph answered names them by
 * id, as the hub needs.
 */
export function checkGraph(input: unknown, context: GraphCheckContext): GraphCheck {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (err) {
      return { ok: false, problems: [`not JSON: ${err instanceof Error ? err.message : String(err)}`] };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problems: ['the graph must be an object: TransitionGraph.to_dict() of AG2'] };
  }
  const parsed = TransitionGraphDictSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problems: issuesOf(parsed.error, 'graph') };
  const graph = parsed.data;
  const problems: string[] = [];
  graph.transitions.forEach((t, i) => {
    problems.push(...checkSpec(t.when, 'condition', `transitions.${i}.when`));
    if (t.then !== null) problems.push(...checkSpec(t.then, 'target', `transitions.${i}.then`));
  });
  if (graph.default_target !== null) problems.push(...checkSpec(graph.default_target, 'target', 'default_target'));
  if (problems.length > 0) return { ok: false, problems };

  const speaker = (nameOrId: string, where: string): string => {
    const id = context.resolve(nameOrId);
    if (id === null) {
      problems.push(`${where}: '${nameOrId}' is no agent the directory knows`);
      return nameOrId;
    }
    if (!context.participants.includes(id)) {
      problems.push(`${where}: ${context.nameOf(id)} is not in the channel: invite it`);
    }
    return id;
  };
  const withSpeaker = (spec: TransitionSpec, where: string): TransitionSpec => {
    const agent = spec.args['agent_id'];
    if (typeof agent !== 'string' || (spec.name !== 'from_speaker' && spec.name !== 'agent')) return spec;
    return { ...spec, args: { ...spec.args, agent_id: speaker(agent, `${where}.args.agent_id`) } };
  };
  const resolved: CheckedGraph = {
    ...graph,
    initial_speaker: speaker(graph.initial_speaker, 'initial_speaker'),
    transitions: graph.transitions.map((t, i) => ({
      ...t,
      when: withSpeaker(t.when, `transitions.${i}.when`),
      then: t.then === null ? null : withSpeaker(t.then, `transitions.${i}.then`),
    })),
    default_target: graph.default_target === null ? null : withSpeaker(graph.default_target, 'default_target'),
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, graph: resolved };
}
