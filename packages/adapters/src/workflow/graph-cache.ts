import { WorkflowGraphError } from './errors.js';
import { TransitionGraph } from './graph.js';
import type { TransitionRegistry } from './registry.js';

/**
 * Parsed graphs keyed by the `graph_data` object they came from, so that folding a long log parses the graph
 * once. A graph that failed to load caches its error. Entries go when the `graph_data` object is collected.
 * A name registered after a graph was cached does not change that graph.
 */
export class GraphCache {
  readonly #entries = new WeakMap<object, TransitionGraph | WorkflowGraphError>();

  constructor(private readonly registry: TransitionRegistry) {}

  /** The graph of `data`; throws the `WorkflowGraphError` that loading it raised. */
  load(data: Readonly<Record<string, unknown>>): TransitionGraph {
    const entry = this.#entry(data);
    if (entry instanceof WorkflowGraphError) throw entry;
    return entry;
  }

  /** The graph of `data`, or `null` when it does not load. */
  tryLoad(data: Readonly<Record<string, unknown>>): TransitionGraph | null {
    const entry = this.#entry(data);
    return entry instanceof WorkflowGraphError ? null : entry;
  }

  #entry(data: Readonly<Record<string, unknown>>): TransitionGraph | WorkflowGraphError {
    const cached = this.#entries.get(data);
    if (cached !== undefined) return cached;
    let entry: TransitionGraph | WorkflowGraphError;
    try {
      entry = TransitionGraph.fromDict(data, { registry: this.registry });
    } catch (err) {
      // fromDict throws only WorkflowGraphError; anything else is a bug and propagates.
      if (!(err instanceof WorkflowGraphError)) throw err;
      entry = err;
    }
    this.#entries.set(data, entry);
    return entry;
  }
}
