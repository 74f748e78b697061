import type { Passport, Resume } from '@ag2net/protocol';

/** A SKILL.md split into its scalar frontmatter and its body. */
export interface ParsedSkill {
  readonly frontmatter: Readonly<Record<string, string>>;
  readonly body: string;
}

const FENCE = '---';
// The line boundaries of Python's `str.splitlines()`.
const PY_LINE_BREAKS = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/**
 * AG2's `parse_skill_frontmatter`: splits a SKILL.md into `---`-fenced frontmatter and body. Without an opening
 * fence at the very start, or without a closing `\n---`, the whole document is the body. Only scalar `key: value`
 * lines are read; blank lines, `#` comments and lines without `:` are skipped.
 */
export function parseSkillFrontmatter(md: string): ParsedSkill {
  if (!md.startsWith(FENCE)) return { frontmatter: {}, body: md };
  let rest = md.slice(FENCE.length);
  if (rest.startsWith('\n')) rest = rest.slice(1);
  const closing = rest.indexOf(`\n${FENCE}`);
  if (closing === -1) return { frontmatter: {}, body: md };
  const header = rest.slice(0, closing);
  let body = rest.slice(closing + FENCE.length + 1);
  if (body.startsWith('\n')) body = body.slice(1);
  const frontmatter: Record<string, string> = {};
  for (const line of header.split(PY_LINE_BREAKS)) {
    const stripped = line.trim();
    if (stripped === '' || stripped.startsWith('#')) continue;
    const colon = stripped.indexOf(':');
    if (colon === -1) continue;
    frontmatter[stripped.slice(0, colon).trim()] = stripped.slice(colon + 1).trim();
  }
  return { frontmatter, body };
}

/**
 * AG2's `render_fallback_skill`: a SKILL.md for an agent that registered none, from its passport and resume —
 * frontmatter (name, description = summary or `Network-registered agent.`), then the sections that have
 * content: capabilities, domains, track record (by capability, sorted) and examples. Ends with one newline.
 */
export function renderFallbackSkill(passport: Pick<Passport, 'name'>, resume: Resume): string {
  const lines = [
    '---',
    `name: ${passport.name}`,
    `description: ${resume.summary || 'Network-registered agent.'}`,
    '---',
    '',
  ];
  if (resume.claimed_capabilities.length > 0) {
    lines.push('## Capabilities', ...resume.claimed_capabilities.map((c) => `- ${c}`), '');
  }
  if (resume.domains.length > 0) {
    lines.push('## Domains', ...resume.domains.map((d) => `- ${d}`), '');
  }
  const observed = Object.keys(resume.observed).sort();
  if (observed.length > 0) {
    lines.push('## Track record');
    for (const cap of observed) {
      const s = resume.observed[cap];
      if (s === undefined) continue;
      lines.push(`- ${cap}: ${s.completed} completed / ${s.failed} failed / ${s.expired} expired (n=${s.n})`);
    }
    lines.push('');
  }
  if (resume.examples.length > 0) {
    lines.push('## Examples', ...resume.examples.map((ex) => `- ${ex.title} — ${ex.outcome || 'no outcome'}`), '');
  }
  while (lines.at(-1) === '') lines.pop();
  return `${lines.join('\n')}\n`;
}
