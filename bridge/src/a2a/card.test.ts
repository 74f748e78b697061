import { PassportSchema, ResumeSchema } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { agentCard, agentCardUrl } from './card.js';

const passport = PassportSchema.parse({
  name: 'oracle',
  agent_id: 'a1',
  provider: 'scripted',
  model: 'scripted',
  version: 2,
});
const base = 'http://127.0.0.1:8787';

describe('a2a agent card', () => {
  it('takes the skill from SKILL.md frontmatter and one skill per claimed capability', () => {
    const resume = ResumeSchema.parse({
      summary: 'Knows capitals.',
      claimed_capabilities: ['geography', 'history'],
      domains: ['europe'],
      examples: [{ title: 'Capital of France' }],
    });
    const card = agentCard({
      passport,
      resume,
      skillMd: '---\nname: capitals\ndescription: "Names capitals."\n---\n# Body\n',
      baseUrl: base,
    });
    expect(card.skills.map((s) => [s.id, s.name, s.description, s.tags, s.examples])).toEqual([
      ['skill', 'capitals', 'Names capitals.', ['europe'], ['Capital of France']],
      ['capability:geography', 'geography', 'Knows capitals.', ['geography', 'europe'], ['Capital of France']],
      ['capability:history', 'history', 'Knows capitals.', ['history', 'europe'], ['Capital of France']],
    ]);
    expect(card.description).toBe('Knows capitals. Model: scripted/scripted.');
    expect(card.version).toBe('2');
  });

  it('reads a SKILL.md without frontmatter by its heading and first paragraph, and has one skill without any', () => {
    const withMd = agentCard({ passport, resume: null, skillMd: '# Capitals\n\nNames them.\n', baseUrl: base });
    expect(withMd.skills.map((s) => [s.name, s.description])).toEqual([['Capitals', 'Names them.']]);
    const bare = agentCard({ passport, resume: null, skillMd: null, baseUrl: base });
    expect(bare.skills.map((s) => [s.id, s.name])).toEqual([['ask', 'Ask oracle']]);
  });

  it('names its JSON-RPC endpoint for A2A 1.0 and 0.3, escapes the name in URLs, and needs the bearer token', () => {
    const card = agentCard({ passport: { ...passport, name: 'a b' }, resume: null, skillMd: null, baseUrl: base });
    expect(card.supportedInterfaces.map((i) => [i.url, i.protocolVersion])).toEqual([
      [`${base}/a2a/agents/a%20b`, '1.0'],
      [`${base}/a2a/agents/a%20b`, '0.3'],
    ]);
    expect(agentCardUrl(base, 'a b')).toBe(`${base}/a2a/agents/a%20b/.well-known/agent-card.json`);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(card.securitySchemes['bearer']?.scheme).toMatchObject({ $case: 'httpAuthSecurityScheme' });
  });
});
