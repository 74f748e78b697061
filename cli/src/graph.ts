import { z } from 'zod';

/** A target or condition of a workflow graph, as AG2's `to_dict()` writes it. */
const SpecSchema = z.looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).default({}) });
type Spec = z.infer<typeof SpecSchema>;

/**
 * The parts of a workflow graph (`knobs.graph`) the command shows; read loosely, since the hub validated the graph
 * when it created the channel and a custom adapter may add fields.
 */
const GraphSchema = z.looseObject({
  initial_speaker: z.string(),
  transitions: z
    .array(z.looseObject({ when: SpecSchema, then: SpecSchema.nullable(), priority: z.number().default(0) }))
    .default([]),
  default_target: SpecSchema.nullable().default(null),
  max_turns: z.number().nullable().default(null),
});

/**
 * A workflow graph as lines a person reads, agents by name (`name` of an id; an unknown id stays as it is): who
 * starts, each transition in the order the hub tries them (by priority, then as listed) with its condition and
 * target, what happens when none holds, and the turn limit. `null` when `value` is no graph.
 */
export function describeGraph(value: unknown, name: (agentId: string) => string): string[] | null {
  const parsed = GraphSchema.safeParse(value);
  if (!parsed.success) return null;
  const graph = parsed.data;
  const spec = (s: Spec | null): string => {
    if (s === null) return 'terminate';
    const args = Object.entries(s.args).map(([key, v]) =>
      typeof v === 'string' ? (key === 'agent_id' ? name(v) : v) : JSON.stringify(v),
    );
    // A hand-off to an agent reads as the agent; every other target or condition as its name and arguments.
    if (s.name === 'agent' && typeof s.args['agent_id'] === 'string') return name(s.args['agent_id']);
    if (s.name === 'terminate') return args.length === 0 ? 'terminate' : `terminate (${args.join(', ')})`;
    return [s.name, ...args].join(' ');
  };
  const ordered = graph.transitions.map((t, i) => ({ t, i })).sort((a, b) => a.t.priority - b.t.priority || a.i - b.i);
  const whens = ordered.map(({ t }) => spec(t.when));
  const width = Math.max(9, ...whens.map((w) => w.length + 4));
  return [
    `starts with ${name(graph.initial_speaker)}`,
    ...ordered.map(({ t }, n) => `${`${n + 1}. ${whens[n] ?? ''}`.padEnd(width)} → ${spec(t.then)}`),
    `${'otherwise'.padEnd(width)} → ${spec(graph.default_target)}`,
    ...(graph.max_turns === null ? [] : [`at most ${graph.max_turns} turns`]),
  ];
}
