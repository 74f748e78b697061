import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunnerConfigError, parseRunnerConfig } from '../config.js';
import { A2aHeaderError, resolveHeaders } from './options.js';
import { promptText } from './remote-model.js';

function refusal(text: string): string {
  try {
    parseRunnerConfig(text, 'agents.yaml');
  } catch (err) {
    if (err instanceof RunnerConfigError) return err.message;
    throw err;
  }
  throw new Error('parseRunnerConfig accepted the text');
}

describe('a2a agents in the runner file', () => {
  it('reads an a2a agent with its owner, and fills in the timeout and answer bound', () => {
    const text = "agents:\n  - { name: r, owner: acme, a2a: { url: 'https://agents.example/a2a' } }\n";
    expect(parseRunnerConfig(text, 'agents.yaml').agents[0]).toEqual({
      name: 'r',
      instructions: '',
      owner: 'acme',
      a2a: { url: 'https://agents.example/a2a', headers: {}, timeout_ms: 60_000, max_answer_bytes: 262_144 },
    });
  });

  it('refuses an agent with both a model and an a2a endpoint, or neither, an a2a agent without an owner, and a non-http url', () => {
    expect(refusal("agents:\n  - { name: r, model: { provider: auto }, owner: o, a2a: { url: 'http://h/a' } }\n")).toBe(
      'agents.yaml is invalid:\n  agents.0.model: give either model or a2a',
    );
    expect(refusal('agents:\n  - { name: r }\n')).toBe(
      'agents.yaml is invalid:\n  agents.0.model: give either model or a2a',
    );
    expect(refusal("agents:\n  - { name: r, a2a: { url: 'http://h/a' } }\n")).toBe(
      'agents.yaml is invalid:\n  agents.0.owner: an a2a agent needs the owner it is registered for',
    );
    expect(refusal("agents:\n  - { name: r, owner: o, a2a: { url: 'file:///etc/passwd' } }\n")).toMatch(
      /^agents\.yaml is invalid:\n {2}agents\.0\.a2a\.url: /,
    );
  });

  it('reads header values from the environment and from files, and names the one it cannot read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ag2net-a2a-headers-'));
    try {
      await writeFile(join(dir, 'token'), 'from-file\n');
      const sources = { env: { TOKEN: 'from-env' }, resolvePath: (p: string) => join(dir, p) };
      expect(await resolveHeaders({ A: 'literal', B: { env: 'TOKEN' }, C: { file: 'token' } }, sources)).toEqual({
        A: 'literal',
        B: 'from-env',
        C: 'from-file',
      });
      await expect(resolveHeaders({ Authorization: { env: 'MISSING' } }, sources)).rejects.toThrow(
        new A2aHeaderError('Authorization', 'header Authorization: environment variable MISSING is not set'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sends the remote what was said since its own last answer, the trigger last', () => {
    const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
    const own = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'mine' }] };
    const system = { role: 'system' as const, content: 'You are r.' };
    expect(promptText([system, user('[a]: old'), own, user('[b]: since'), user('[a]: now')])).toBe(
      '[b]: since\n\n[a]: now',
    );
    expect(promptText([system, user('[a]: first')])).toBe('[a]: first');
  });
});
