import { repr } from '@ag2net/protocol/internal';
import type { Passport, Resume } from '@ag2net/protocol';
import { renderFallbackSkill } from '../skills.js';
import type { ToolContext } from './context.js';

/** Arguments of `peers`. */
export interface PeersArgs {
  readonly action: 'find' | 'describe';
  readonly query?: string | null;
  readonly capability?: string | null;
  readonly sort_by?: 'name' | 'cost' | 'track_record' | null;
  /** For `describe`: the peer's name or agent id. */
  readonly name?: string | null;
  /** For `find`; default 20. */
  readonly limit?: number | null;
}

/** One peer as `peers(action="find")` lists it. */
export interface PeerSummary {
  readonly name: string;
  readonly agent_id: string | null;
  readonly summary: string;
  readonly capabilities: string[];
  /** Completed over observed outcomes across every capability; `null` before any. */
  readonly observed_success_rate: number | null;
  readonly cost: {
    readonly input_per_mtok: number | null;
    readonly output_per_mtok: number | null;
    readonly latency_tier: string | null;
  } | null;
}

/**
 * AG2's `peers`: `find` lists the registered agents matching `query`/`capability` (the caller left out), with
 * summary, capabilities, observed success rate and cost, optionally sorted; `describe` returns one peer's
 * passport, resume and SKILL.md (a rendered fallback when it registered none).
 */
export async function peers(
  ctx: ToolContext,
  args: PeersArgs,
): Promise<PeerSummary[] | Record<string, unknown> | string> {
  const hub = ctx.client.hub;
  if (args.action === 'find') {
    const passports = await hub.listAgents({
      capability: args.capability ?? null,
      query: args.query ?? null,
      limit: args.limit ?? 20,
    });
    const results: PeerSummary[] = [];
    for (const p of passports) {
      if (p.agent_id === ctx.client.agentId || p.agent_id === null) continue;
      results.push(summaryOf(p, await hub.getResume(p.agent_id)));
    }
    return sortPeers(results, args.sort_by ?? null);
  }
  if (!args.name) return 'Error: describe requires `name` (or agent_id)';
  let passport: Passport;
  try {
    passport = await hub.getAgent(args.name);
  } catch {
    return `Error: peer ${repr(args.name)} not found`;
  }
  if (passport.agent_id === null) return `Error: peer ${repr(args.name)} not found`;
  const resume = await hub.getResume(passport.agent_id);
  const skill = await hub.getSkill(passport.agent_id);
  return {
    passport: {
      name: passport.name,
      agent_id: passport.agent_id,
      owner: passport.owner,
      provider: passport.provider,
      model: passport.model,
    },
    resume: {
      summary: resume.summary,
      claimed_capabilities: [...resume.claimed_capabilities],
      domains: [...resume.domains],
      observed: Object.fromEntries(
        Object.entries(resume.observed).map(([cap, s]) => [
          cap,
          { n: s.n, completed: s.completed, failed: s.failed, expired: s.expired },
        ]),
      ),
    },
    skill_md: skill || renderFallbackSkill(passport, resume),
  };
}

function summaryOf(passport: Passport, resume: Resume): PeerSummary {
  const stats = Object.values(resume.observed);
  const completed = stats.reduce((sum, s) => sum + s.completed, 0);
  const total = stats.reduce((sum, s) => sum + s.n, 0);
  return {
    name: passport.name,
    agent_id: passport.agent_id,
    summary: resume.summary,
    capabilities: [...resume.claimed_capabilities],
    observed_success_rate: total === 0 ? null : completed / total,
    cost:
      passport.cost === null
        ? null
        : {
            input_per_mtok: passport.cost.input_per_mtok,
            output_per_mtok: passport.cost.output_per_mtok,
            latency_tier: passport.cost.latency_tier,
          },
  };
}

/** Cheapest first with unknown prices last; best track record first (none counts as 0). Stable. */
function sortPeers(results: PeerSummary[], sortBy: PeersArgs['sort_by']): PeerSummary[] {
  const price = (r: PeerSummary): number => r.cost?.input_per_mtok ?? Infinity;
  const record = (r: PeerSummary): number => r.observed_success_rate ?? 0;
  switch (sortBy) {
    case 'name':
      return results.sort((a, b) => compare(a.name, b.name));
    case 'cost':
      return results.sort((a, b) => compare(price(a), price(b)));
    case 'track_record':
      return results.sort((a, b) => compare(record(b), record(a)));
    case null:
    case undefined:
      return results;
    default:
      return unknownSort(sortBy);
  }
}

function compare<T extends string | number>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function unknownSort(sortBy: never): never {
  throw new TypeError(`unknown sort_by: ${String(sortBy)}`);
}
