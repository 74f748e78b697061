import type { HubClient } from '@ag2net/client';
import type { NameResolver } from '../views/types.js';

/** The maximum `listAgents` returns in one call. */
const MAX_AGENTS = 1000;

/** Names and ids of the registered agents, read once per turn. */
export interface Directory {
  /** Agent id → name; an unknown id resolves to itself (AG2's `name_for`). */
  readonly nameFor: NameResolver;
  /** Name → agent id, to resolve handoff targets written as names. */
  readonly nameToId: ReadonlyMap<string, string>;
}

/** Reads the hub's agent directory (up to 1000 agents). */
export async function loadDirectory(hub: Pick<HubClient, 'listAgents'>): Promise<Directory> {
  const agents = await hub.listAgents({ limit: MAX_AGENTS });
  const names = new Map<string, string>();
  const ids = new Map<string, string>();
  for (const p of agents) {
    if (p.agent_id === null) continue;
    names.set(p.agent_id, p.name);
    ids.set(p.name, p.agent_id);
  }
  return { nameFor: (id) => names.get(id) ?? id, nameToId: ids };
}
