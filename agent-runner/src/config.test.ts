import { describe, expect, it } from 'vitest';
import { RunnerConfigError, loadRunnerConfig, parseRunnerConfig } from './config.js';
import { modelConfigOf } from './host.js';

function refusal(text: string, path = 'agents.yaml'): string {
  try {
    parseRunnerConfig(text, path);
  } catch (err) {
    if (err instanceof RunnerConfigError) return err.message;
    throw err;
  }
  throw new Error('parseRunnerConfig accepted the text');
}

describe('runner configuration', () => {
  it('reads the demo configuration with its six agents, auto models and tool modules', async () => {
    const { config, baseDir } = await loadRunnerConfig('agent-runner/demo/agents.yaml');
    expect(config.agents.map((a) => a.name)).toEqual(['expert', 'pal', 'critic', 'optimist', 'triage', 'billing']);
    expect(baseDir.endsWith('agent-runner/demo')).toBe(true);
    const triage = config.agents[4];
    expect(triage?.model).toEqual({
      provider: 'auto',
      script: [
        { tool: 'transfer_to_billing', args: { reason: 'duplicate charge' } },
        'Billing will take care of the duplicate charge.',
      ],
      loop: true,
    });
    expect(triage?.tools).toEqual({ module: './tools.ts', export: 'triageTools' });
    // Offline, every demo agent gets its script started over once used up: it keeps answering after the demo.
    const offline = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '' };
    expect(config.agents.map((a) => modelConfigOf(a, offline).model)).toEqual(
      config.agents.map((a) => ({
        provider: 'scripted',
        script: a.model?.provider === 'auto' ? a.model.script : [],
        loop: true,
      })),
    );
  });

  it('reads JSON as well as YAML', () => {
    const config = parseRunnerConfig(
      JSON.stringify({ prefix: 'team', agents: [{ name: 'a', model: { provider: 'scripted', script: ['hi'] } }] }),
      'runner.json',
    );
    expect(config).toEqual({
      prefix: 'team',
      agents: [
        {
          name: 'a',
          instructions: '',
          model: { provider: 'scripted', model: 'scripted', script: ['hi'], loop: false },
        },
      ],
    });
  });

  it('lists every problem with its path', () => {
    const text = [
      'agents:',
      '  - name: a',
      '    model: { provider: gpt }',
      '    colour: blue',
      '  - model: { provider: auto }',
    ].join('\n');
    const message = refusal(text);
    expect(message.split('\n')[0]).toBe('agents.yaml is invalid:');
    expect(message).toContain('  agents.0.model: ');
    expect(message).toContain('  agents.0: Unrecognized key: "colour"');
    expect(message).toContain('  agents.1.name: Invalid input: expected string, received undefined');
  });

  it('refuses an agent declared twice, an empty agent list and a file that is not YAML', () => {
    const twice = 'agents:\n  - { name: a, model: { provider: auto } }\n  - { name: a, model: { provider: auto } }\n';
    expect(refusal(twice)).toBe('agents.yaml is invalid:\n  agents: a is declared twice');
    expect(refusal('agents: []\n')).toBe('agents.yaml is invalid:\n  agents: declare at least one agent');
    expect(refusal('agents: [\n')).toMatch(/^agents\.yaml is not valid YAML: /);
    expect(refusal('{', 'runner.json')).toMatch(/^runner\.json is not valid JSON: /);
  });

  it('reads the model timeout and retries of an agent, and refuses them out of range', () => {
    const ok = parseRunnerConfig(
      'agents:\n  - { name: a, model: { provider: auto }, timeout_ms: 30000, max_retries: 0 }\n',
      'agents.yaml',
    );
    expect([ok.agents[0]?.timeout_ms, ok.agents[0]?.max_retries]).toEqual([30_000, 0]);
    const bad = 'agents:\n  - { name: a, model: { provider: auto }, timeout_ms: 5, max_retries: -1 }\n';
    expect(refusal(bad)).toBe(
      [
        'agents.yaml is invalid:',
        '  agents.0.timeout_ms: Too small: expected number to be >=100',
        '  agents.0.max_retries: Too small: expected number to be >=0',
      ].join('\n'),
    );
  });

  it('says which file it could not read', async () => {
    await expect(loadRunnerConfig('/nonexistent/agents.yaml')).rejects.toThrow(
      /^cannot read \/nonexistent\/agents\.yaml: ENOENT/,
    );
  });
});
