import { repr } from '@ag2net/protocol/internal';
import { NotFoundError } from '@ag2net/protocol';
import type { AdapterLookup, ChannelAdapter } from './types.js';

/**
 * The adapters a hub or agent knows, keyed by `(type, version)`. An instance, never a global: each hub builds
 * its own. Registering the same key again replaces the adapter.
 *
 * It holds both sides of each protocol and is handed to each party as the side it calls: the hub takes it as an
 * `AdapterLookup<HubAdapter>`, the agent runtime as an `AdapterLookup<AgentAdapter>`.
 */
export class AdapterRegistry implements AdapterLookup<ChannelAdapter> {
  readonly #adapters = new Map<string, ChannelAdapter>();

  /** Adds or replaces the adapter under its manifest's `(type, version)`. */
  register(adapter: ChannelAdapter): this {
    this.#adapters.set(key(adapter.manifest.type, adapter.manifest.version), adapter);
    return this;
  }

  /** The adapter for `(type, version)`, or `undefined`. */
  find(type: string, version: number): ChannelAdapter | undefined {
    return this.#adapters.get(key(type, version));
  }

  /** The adapter for `(type, version)`; throws `NotFoundError` (`no adapter registered for 'x'@v1`). */
  get(type: string, version: number): ChannelAdapter {
    const adapter = this.find(type, version);
    if (adapter === undefined) throw new NotFoundError(`no adapter registered for ${repr(type)}@v${version}`);
    return adapter;
  }

  /** Every registered adapter, in registration order. */
  list(): readonly ChannelAdapter[] {
    return [...this.#adapters.values()];
  }

  get size(): number {
    return this.#adapters.size;
  }
}

function key(type: string, version: number): string {
  return `${type}@v${version}`;
}
