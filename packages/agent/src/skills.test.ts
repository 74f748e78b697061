import { ResumeSchema } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { parseSkillFrontmatter, renderFallbackSkill } from './skills.js';

describe('parseSkillFrontmatter', () => {
  it('splits scalar frontmatter from the body, skipping blanks, comments and lines without a colon', () => {
    const md =
      '---\nname: alice\n\n# a comment\ndescription:  Senior policy analyst. \nno colon here\nurl: http://x\n---\n## What I do\n\nPolicy.\n';
    expect(parseSkillFrontmatter(md)).toEqual({
      frontmatter: { name: 'alice', description: 'Senior policy analyst.', url: 'http://x' },
      body: '## What I do\n\nPolicy.\n',
    });
  });

  it('treats a document without an opening fence as all body', () => {
    expect(parseSkillFrontmatter('# Alice\n---\nname: x\n')).toEqual({
      frontmatter: {},
      body: '# Alice\n---\nname: x\n',
    });
  });

  it('treats a document without a closing fence as all body', () => {
    expect(parseSkillFrontmatter('---\nname: alice\n')).toEqual({ frontmatter: {}, body: '---\nname: alice\n' });
  });

  it('accepts an empty frontmatter and a body right after the fence', () => {
    expect(parseSkillFrontmatter('---\n\n---\nbody')).toEqual({ frontmatter: {}, body: 'body' });
  });
});

describe('renderFallbackSkill', () => {
  it('renders only the frontmatter with the default description for an empty resume', () => {
    expect(renderFallbackSkill({ name: 'carol' }, ResumeSchema.parse({}))).toBe(
      '---\nname: carol\ndescription: Network-registered agent.\n---\n',
    );
  });

  it('renders capabilities, domains, the track record by sorted capability and examples', () => {
    const resume = ResumeSchema.parse({
      summary: 'qa lead',
      claimed_capabilities: ['testing', 'triage'],
      domains: ['payments'],
      observed: {
        triage: { n: 4, completed: 3, failed: 1, expired: 0 },
        testing: { n: 2, completed: 1, failed: 0, expired: 1 },
      },
      examples: [{ title: 'Release 1.2 sign-off', outcome: 'shipped' }, { title: 'Flaky suite' }],
    });
    expect(renderFallbackSkill({ name: 'carol' }, resume)).toBe(
      [
        '---',
        'name: carol',
        'description: qa lead',
        '---',
        '',
        '## Capabilities',
        '- testing',
        '- triage',
        '',
        '## Domains',
        '- payments',
        '',
        '## Track record',
        '- testing: 1 completed / 0 failed / 1 expired (n=2)',
        '- triage: 3 completed / 1 failed / 0 expired (n=4)',
        '',
        '## Examples',
        '- Release 1.2 sign-off — shipped',
        '- Flaky suite — no outcome',
        '',
      ].join('\n'),
    );
  });
});
