import { A2A_PROTOCOL_VERSION, type AgentCard, type AgentSkill } from '@a2a-js/sdk';
import type { Passport, Resume } from '@ag2net/protocol';

/** The protocol version the v0.3 compatibility interface declares. */
const LEGACY_PROTOCOL_VERSION = '0.3';

/** The name of the card's one security scheme: the bridge's bearer session token. */
export const BEARER_SCHEME = 'bearer';

/** What an agent's card is made of: what the hub knows of the agent, and where the bridge serves it. */
export interface CardSource {
  readonly passport: Passport;
  /** The agent's resume; `null` when it has none. */
  readonly resume: Resume | null;
  /** Its SKILL.md; `null` when it has none. */
  readonly skillMd: string | null;
  /** The bridge's base URL as the client reached it: `http://host:port`. */
  readonly baseUrl: string;
}

/** The JSON-RPC endpoint of an agent: `<base>/a2a/agents/<name>`. */
export function agentEndpoint(baseUrl: string, name: string): string {
  return `${baseUrl}/a2a/agents/${encodeURIComponent(name)}`;
}

/** The URL of an agent's card. */
export function agentCardUrl(baseUrl: string, name: string): string {
  return `${agentEndpoint(baseUrl, name)}/.well-known/agent-card.json`;
}

/** A SKILL.md's frontmatter `name` and `description`, else its first heading and first paragraph. */
function skillOfMarkdown(markdown: string): { name: string; description: string } {
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(markdown)?.[1] ?? '';
  const field = (key: string): string =>
    (new RegExp(`^${key}:\\s*(.+)$`, 'm').exec(front)?.[1] ?? '').trim().replace(/^['"]|['"]$/g, '');
  const body = markdown.slice(front === '' ? 0 : markdown.indexOf('---', 3) + 3);
  const heading = /^#+\s+(.+)$/m.exec(body)?.[1]?.trim() ?? '';
  const paragraph =
    body
      .split(/\r?\n\s*\r?\n/)
      .map((p) => p.trim())
      .find((p) => p !== '' && !p.startsWith('#')) ?? '';
  return { name: field('name') || heading || 'skill', description: field('description') || paragraph };
}

function skill(fields: Pick<AgentSkill, 'id' | 'name' | 'description'> & Partial<AgentSkill>): AgentSkill {
  return { tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [], ...fields };
}

/** The card's skills: the SKILL.md's, then one per claimed capability; one generic skill when there is neither. */
function skillsOf(source: CardSource): AgentSkill[] {
  const { passport, resume, skillMd } = source;
  const examples = (resume?.examples ?? []).map((e) => e.title).filter((t) => t !== '');
  const domains = resume?.domains ?? [];
  const skills: AgentSkill[] = [];
  if (skillMd !== null && skillMd.trim() !== '') {
    const { name, description } = skillOfMarkdown(skillMd);
    skills.push(skill({ id: 'skill', name, description, tags: [...domains], examples }));
  }
  for (const capability of resume?.claimed_capabilities ?? []) {
    skills.push(
      skill({
        id: `capability:${capability}`,
        name: capability,
        description: resume?.summary || `${passport.name}'s ${capability}`,
        tags: [capability, ...domains],
        examples,
      }),
    );
  }
  if (skills.length === 0) {
    const description = resume?.summary || `Ask ${passport.name} on the ag2net network.`;
    skills.push(skill({ id: 'ask', name: `Ask ${passport.name}`, description, tags: [...domains], examples }));
  }
  return skills;
}

/**
 * The A2A card of a network agent: its name, its resume's summary, its skills (SKILL.md and claimed capabilities),
 * streaming, one JSON-RPC endpoint declared for A2A 1.0 and 0.3, and the bridge's bearer token as the security
 * scheme. Derived from the hub's records on each request, so every replica serves the same card.
 */
export function agentCard(source: CardSource): AgentCard {
  const { passport, resume, baseUrl } = source;
  const url = agentEndpoint(baseUrl, passport.name);
  const model = passport.provider === null ? '' : ` Model: ${passport.provider}/${passport.model ?? ''}.`;
  return {
    name: passport.name,
    description: `${resume?.summary || `${passport.name}, an agent of the ag2net network.`}${model}`,
    supportedInterfaces: [A2A_PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSION].map((protocolVersion) => ({
      url,
      protocolBinding: 'JSONRPC',
      tenant: '',
      protocolVersion,
    })),
    provider: { organization: 'ag2net', url: baseUrl },
    version: String(passport.version),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: true },
    securitySchemes: {
      [BEARER_SCHEME]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'Bearer',
            bearerFormat: 'ag2net session token',
            description: `Sign in with POST ${baseUrl}/v1/session { name, api_key }: the answer's token acts as that person.`,
          },
        },
      },
    },
    securityRequirements: [{ schemes: { [BEARER_SCHEME]: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skillsOf(source),
    signatures: [],
  };
}
