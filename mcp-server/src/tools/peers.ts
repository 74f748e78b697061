import { effectiveKind, type Passport, type PassportKind, type Resume } from '@ag2net/protocol';
import { resolveAgent } from './resolve.js';
import { PeersInputSchema } from './schemas.js';
import { defineTool, jsonOutput, type ToolContext } from './tool.js';

/** The longest resume summary `find` shows per agent, in characters. */
const MAX_SUMMARY_CHARS = 500;

/** A passport as the directory shows it: never its auth block (it may hold an admission key). */
function publicPassport(p: Passport): Record<string, unknown> {
  return {
    name: p.name,
    agent_id: p.agent_id,
    kind: effectiveKind(p),
    owner: p.owner,
    provider: p.provider,
    model: p.model,
  };
}

async function resumeOf(ctx: ToolContext, agentId: string): Promise<Resume | null> {
  try {
    return await ctx.session.participant.hub.getResume(agentId, { signal: ctx.signal });
  } catch {
    // A resume that cannot be read (the agent unregistered meanwhile) leaves its fields empty.
    return null;
  }
}

function cut(text: string): string {
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text;
}

/** Most passports `find` looks through. */
const MAX_SCANNED = 1_000;

/**
 * The agents `find` answers with: the hub matches `query` against resume summaries; names holding it (any case)
 * are added here, so that an agent is found by its name too.
 */
async function findAgents(
  ctx: ToolContext,
  args: {
    readonly query?: string | undefined;
    readonly capability?: string | undefined;
    readonly kind?: PassportKind | undefined;
  },
): Promise<Passport[]> {
  const hub = ctx.session.participant.hub;
  const filter = { capability: args.capability ?? null, kind: args.kind ?? null, limit: MAX_SCANNED };
  const call = { signal: ctx.signal };
  if (args.query === undefined || args.query === '') return hub.listAgents(filter, call);
  const needle = args.query.toLowerCase();
  const [bySummary, all] = await Promise.all([
    hub.listAgents({ ...filter, query: args.query }, call),
    hub.listAgents(filter, call),
  ]);
  const matched = new Set(bySummary.map((p) => p.agent_id));
  return all.filter((p) => matched.has(p.agent_id) || p.name.toLowerCase().includes(needle));
}

/** AG2's `peers`: the directory of the network, searched (`find`) or one agent in full (`describe`). */
export const peersTool = defineTool({
  name: 'peers',
  description:
    'The directory of agents on the network. find (default): query?, capability?, kind?, limit → name, agent_id, ' +
    'kind, summary, capabilities of each (yourself left out). describe: name → passport, resume and SKILL.md.',
  input: PeersInputSchema,
  readOnly: true,
  async run(ctx, args) {
    const { participant } = ctx.session;
    if (args.action === 'describe') {
      const passport = await resolveAgent(ctx, args.name ?? participant.agentId);
      const [resume, skill] = await Promise.all([
        resumeOf(ctx, passport.agent_id),
        participant.hub.getSkill(passport.agent_id, { signal: ctx.signal }).catch(() => null),
      ]);
      return jsonOutput({
        passport: publicPassport(passport),
        resume:
          resume === null
            ? null
            : {
                summary: resume.summary,
                claimed_capabilities: resume.claimed_capabilities,
                domains: resume.domains,
                observed: resume.observed,
              },
        skill_md: skill,
      });
    }
    const found = await findAgents(ctx, args);
    const others = found.filter((p) => p.agent_id !== null && p.agent_id !== participant.agentId).slice(0, args.limit);
    const peers = await Promise.all(
      others.map(async (p) => {
        const resume = p.agent_id === null ? null : await resumeOf(ctx, p.agent_id);
        return {
          ...publicPassport(p),
          summary: cut(resume?.summary ?? ''),
          capabilities: resume?.claimed_capabilities ?? [],
        };
      }),
    );
    return jsonOutput({ peers });
  },
});
