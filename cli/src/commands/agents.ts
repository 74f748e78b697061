import { PassportKindSchema, effectiveKind, type Passport } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { IntFlag, NoOptions, action, actionOn } from '../env.js';
import type { CliIo } from '../io.js';
import { modelOf, shortTime } from '../render.js';
import { resolveAgent } from '../resolve.js';

const LsOptions = z.object({
  kind: PassportKindSchema.optional(),
  capability: z.string().optional(),
  query: z.string().optional(),
  limit: IntFlag.default(100),
});

/** `ag2net agents ls|show`: the public agent directory. */
export function agentsCommand(program: Command, io: CliIo): void {
  const agents = program
    .command('agents')
    .description('the agent directory (public: no rights needed); without a subcommand, ls');
  agents
    .command('ls', { isDefault: true })
    .description('registered agents and people (the default)')
    .option('--kind <kind>', 'agent, human or remote_agent')
    .option('--capability <name>', 'only agents whose resume lists this capability')
    .option('--query <text>', 'only agents whose name or resume matches')
    .option('--limit <n>', 'at most this many (default 100)')
    .action(
      action(io, LsOptions, async (env, opts) => {
        const session = await env.session();
        const list = await session.hub.listAgents({
          kind: opts.kind ?? null,
          capability: opts.capability ?? null,
          query: opts.query ?? null,
          limit: opts.limit,
        });
        if (env.out.json) return env.out.data(list);
        env.out.table(
          list,
          [
            { header: 'name', cell: (p: Passport) => p.name, tone: () => 'accent' },
            { header: 'id', cell: (p) => p.agent_id ?? '-' },
            { header: 'kind', cell: (p) => effectiveKind(p) },
            { header: 'model', cell: (p) => modelOf(p) },
            { header: 'owner', cell: (p) => p.owner || '-' },
            { header: 'registered', cell: (p) => shortTime(p.created_at) },
          ],
          'no agents registered',
        );
      }),
    );
  agents
    .command('show')
    .description("one agent's passport, resume, rule and skill")
    .argument('<agent>', 'name, id or the start of an id')
    .action(
      actionOn(io, NoOptions, async (env, agent) => {
        const session = await env.session();
        const passport = await resolveAgent(session.hub, agent);
        const id = passport.agent_id ?? agent;
        const [resume, rule, skill] = await Promise.all([
          session.hub.getResume(id),
          session.hub.getRule(id),
          session.hub.getSkill(id),
        ]);
        if (env.out.json) return env.out.data({ passport, resume, rule, skill_md: skill });
        const o = env.out;
        o.fields([
          ['name', o.paint('accent', passport.name)],
          ['id', id],
          ['kind', effectiveKind(passport)],
          ['owner', passport.owner || '-'],
          ['model', modelOf(passport)],
          ['registered', passport.created_at || '-'],
          ['auth', passport.auth.scheme],
          ['capabilities', resume.claimed_capabilities.join(', ') || '-'],
          ['observed', Object.keys(resume.observed).join(', ') || '-'],
          ['summary', resume.summary || '-'],
        ]);
        o.line();
        o.line(o.paint('head', 'rule'));
        o.line(JSON.stringify(rule, null, 2));
        if (skill !== null) {
          o.line();
          o.line(o.paint('head', 'skill'));
          o.line(skill.trimEnd());
        }
      }),
    );
}
