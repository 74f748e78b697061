import { describe, expect, it } from 'vitest';
import { parseRunnerConfig } from './config.js';
import { authOf, credsPathFor } from './host.js';

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

  it('keeps each agent’s credentials in the directory under its name, made safe as a file name', () => {
    expect([credsPathFor('/ids', 'expert'), credsPathFor('/ids', '../x y')]).toEqual([
      '/ids/expert.creds',
      '/ids/..%2Fx%20y.creds',
    ]);
  });
});
