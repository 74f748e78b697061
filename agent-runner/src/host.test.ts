import { describe, expect, it } from 'vitest';
import { parseRunnerConfig } from './config.js';
import { admissionKeyOf, authOf, credsPathFor, modelLimitsOf, registeredAs } from './host.js';

const CONFIG = `
agents:
  - name: keyed
    model: { provider: auto }
    auth: { scheme: api_key, claim: { token: own-key } }
  - name: plain
    model: { provider: auto }
`;

describe('hosting credentials', () => {
  it('sends an agent’s own auth block, else the runner’s API key, else none', () => {
    const [keyed, plain] = parseRunnerConfig(CONFIG, 'agents.yaml').agents;
    if (keyed === undefined || plain === undefined) throw new Error('two agents expected');
    const schemeAndClaim = (a: ReturnType<typeof authOf>): unknown => (a === undefined ? a : [a.scheme, a.claim]);
    expect(
      [authOf(keyed, 'runner-key'), authOf(plain, 'runner-key'), authOf(plain, undefined)].map(schemeAndClaim),
    ).toEqual([['api_key', { token: 'own-key' }], ['api_key', { token: 'runner-key' }], undefined]);
  });

  it('sends a remote agent’s owner’s key, else its name’s, else the runner’s', () => {
    const { agents } = parseRunnerConfig(
      [
        'agents:',
        "  - { name: remote, owner: acme, a2a: { url: 'http://127.0.0.1:9/a2a' } }",
        '  - { name: plain, model: { provider: auto } }',
      ].join('\n'),
      'agents.yaml',
    );
    const [remote, plain] = agents;
    if (remote === undefined || plain === undefined) throw new Error('two agents expected');
    const keys = { apiKey: 'runner', apiKeys: { acme: 'k-acme', remote: 'k-remote', plain: 'k-plain' } };
    expect([admissionKeyOf(remote, keys), admissionKeyOf(plain, keys)]).toEqual(['k-acme', 'k-plain']);
    expect(admissionKeyOf(remote, { apiKey: 'runner', apiKeys: { remote: 'k-remote' } })).toBe('k-remote');
    expect(admissionKeyOf(remote, { apiKey: 'runner' })).toBe('runner');
  });

  it('keeps each agent’s credentials in the directory under its name, made safe as a file name', () => {
    expect([credsPathFor('/ids', 'expert'), credsPathFor('/ids', '../x y')]).toEqual([
      '/ids/expert.creds',
      '/ids/..%2Fx%20y.creds',
    ]);
  });
});

describe('hosting models', () => {
  const [own, plain] = parseRunnerConfig(
    `
agents:
  - { name: own, timeout_ms: 5000, max_retries: 0, model: { provider: auto } }
  - { name: plain, model: { provider: auto } }
`,
    'agents.yaml',
  ).agents;

  it('times a call out by the agent’s own timeout_ms, else the runner’s --model-timeout-ms, else the default', () => {
    if (own === undefined || plain === undefined) throw new Error('two agents expected');
    expect([modelLimitsOf(own, 90_000), modelLimitsOf(plain, 90_000), modelLimitsOf(plain, undefined)]).toEqual([
      { timeoutMs: 5000, maxRetries: 0 },
      { timeoutMs: 90_000 },
      {},
    ]);
  });

  it('tells a passport registered with another model from one that names the hosted model', () => {
    const hosted = { provider: 'openai-compatible', model: 'llama3.2' };
    expect(registeredAs({ provider: 'openai-compatible', model: 'llama3.2' }, hosted)).toBeNull();
    expect(registeredAs({ provider: 'scripted', model: 'scripted' }, hosted)).toEqual({
      provider: 'scripted',
      model: 'scripted',
    });
    expect(registeredAs({ provider: null, model: null }, hosted)).toEqual({ provider: null, model: null });
  });
});
