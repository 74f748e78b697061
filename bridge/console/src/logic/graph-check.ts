import { z } from 'zod';

// The check the New channel form runs on a workflow graph before it opens the channel: AG2's
// `TransitionGraph.to_dict()` form read as the adapters read it (packages/adapters: `TransitionGraphDictSchema`, then
// each condition and target by the built-in registry's names and argument schemas), so a graph the hub would refuse
// is refused here, with a sentence saying what to fix. The adapters import Node modules, so the console keeps this
// copy; test/console/workflow.ts checks that both accept and refuse the same graphs.

/** A condition or target as the dict writes it: its registry name and constructor args. */
const SpecSchema = z.looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).default({}) });

/** `TransitionGraphDictSchema` of the adapters. */
const GraphDictSchema = z.looseObject({
  initial_speaker: z.string(),
  transitions: z
    .array(z.looseObject({ when: SpecSchema, then: SpecSchema.nullable(), priority: z.int().default(0) }))
    .default([]),
  default_target: SpecSchema.nullable().default(null),
  max_turns: z.int().nullable().default(null),
});
/** A graph dict with AG2's defaults applied. */
export type CheckedGraph = z.output<typeof GraphDictSchema>;

/** Names a graph may use for its conditions or its targets, each with the schema of its args. */
interface Registry {
  readonly kind: 'condition' | 'target';
  readonly args: Readonly<Record<string, z.ZodType>>;
}

const NoArgs = z.strictObject({});
const AgentArgs = z.strictObject({ agent_id: z.string() });

/** The built-in conditions and their args (the adapters' `createTransitionRegistry`). */
const CONDITIONS: Registry = {
  kind: 'condition',
  args: {
    always: NoArgs,
    from_speaker: AgentArgs,
    tool_called: z.strictObject({ tool_name: z.string() }),
    context_equals: z.strictObject({
      key: z.string(),
      value: z.unknown().refine((v) => v !== undefined, { message: 'expected a value (null matches a missing key)' }),
    }),
  },
};

/** The built-in targets and their args. */
const TARGETS: Registry = {
  kind: 'target',
  args: {
    agent: AgentArgs,
    round_robin: NoArgs,
    stay: NoArgs,
    revert_to_initiator: NoArgs,
    terminate: z.strictObject({ reason: z.string().optional() }),
  },
};

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

function checkSpec(spec: z.output<typeof SpecSchema>, registry: Registry, where: string): string[] {
  const schema = registry.args[spec.name];
  if (schema === undefined) {
    const known = Object.keys(registry.args).join(', ');
    return [`${where}: no ${registry.kind} named '${spec.name}' (known: ${known})`];
  }
  const parsed = schema.safeParse(spec.args);
  return parsed.success ? [] : issuesOf(parsed.error, `${where}.args`);
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
  const parsed = GraphDictSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problems: issuesOf(parsed.error, 'graph') };
  const graph = parsed.data;
  const problems: string[] = [];
  graph.transitions.forEach((t, i) => {
    problems.push(...checkSpec(t.when, CONDITIONS, `transitions.${i}.when`));
    if (t.then !== null) problems.push(...checkSpec(t.then, TARGETS, `transitions.${i}.then`));
  });
  if (graph.default_target !== null) problems.push(...checkSpec(graph.default_target, TARGETS, 'default_target'));
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
  const withSpeaker = (spec: z.output<typeof SpecSchema>, where: string): z.output<typeof SpecSchema> => {
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
