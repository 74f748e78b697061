import { repr } from '@ag2net/protocol/internal';
import { NotFoundError } from '@ag2net/protocol';
import type { AgentRegistry } from './registry.js';

type Names = Pick<AgentRegistry, 'get' | 'idForName'>;

/**
 * The agent id `ref` stands for: a registered id as it is, else the id registered under that passport name (ids
 * win, so a name that happens to equal someone's id cannot redirect it). `null` when it is neither.
 */
function agentIdOf(registry: Names, ref: string): string | null {
  if (registry.get(ref) !== undefined) return ref;
  return registry.idForName(ref);
}

/** The participants of a channel as ids; `not_found` `participant not registered: <ref>` for an unknown one. */
export function resolveParticipants(registry: Names, refs: readonly string[]): string[] {
  return refs.map((ref) => {
    const id = agentIdOf(registry, ref);
    if (id === null) throw new NotFoundError(`participant not registered: ${ref}`);
    return id;
  });
}

/**
 * The knobs with every agent a workflow graph names given by id: `initial_speaker`, and the `agent_id` argument of
 * each transition's condition and target and of the default target. People write graphs with names
 * (`sequence(['me', 'researcher'])`); the adapter and the log work with ids. An unknown name is `not_found`
 * (`workflow graph names an unknown agent: 'x'`). Knobs without a graph, and parts of a graph that are not
 * shaped like one, are left as they are for the adapter to judge.
 */
export function resolveGraphNames(registry: Names, knobs: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const graph = knobs['graph'];
  if (!isRecord(graph)) return { ...knobs };
  const resolve = (ref: string): string => {
    const id = agentIdOf(registry, ref);
    if (id === null) throw new NotFoundError(`workflow graph names an unknown agent: ${repr(ref)}`);
    return id;
  };
  const spec = (value: unknown): unknown => {
    if (!isRecord(value) || !isRecord(value['args'])) return value;
    const agentId = value['args']['agent_id'];
    if (typeof agentId !== 'string') return value;
    return { ...value, args: { ...value['args'], agent_id: resolve(agentId) } };
  };
  const resolved: Record<string, unknown> = { ...graph };
  if (typeof graph['initial_speaker'] === 'string') resolved['initial_speaker'] = resolve(graph['initial_speaker']);
  if (Array.isArray(graph['transitions'])) {
    resolved['transitions'] = graph['transitions'].map((t: unknown) =>
      isRecord(t) ? { ...t, when: spec(t['when']), then: spec(t['then']) } : t,
    );
  }
  if ('default_target' in graph) resolved['default_target'] = spec(graph['default_target']);
  return { ...knobs, graph: resolved };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
