import { describe, expect, it } from 'vitest';
import { MAX_CAUSE_MESSAGE, quotesAny, scrubMessage, scrubSecrets } from './scrub.js';

describe('scrubSecrets', () => {
  it('removes a known secret wherever it occurs, and whatever looks like a key, a token or URL credentials', () => {
    expect(scrubSecrets('key my-own-secret-value was refused', ['my-own-secret-value'])).toBe('key *** was refused');
    expect(scrubSecrets('Incorrect API key provided: sk-proj-abc*****wxyz.')).toBe('Incorrect API key provided: ***.');
    expect(scrubSecrets('sent Authorization: Bearer eyJhbGciOi.x.y (refused)')).toBe(
      'sent Authorization: Bearer *** (refused)',
    );
    expect(scrubSecrets('GET http://admin:pa55@llm.internal:8080/v1 failed')).toBe(
      'GET http://***@llm.internal:8080/v1 failed',
    );
    expect(scrubSecrets('https://x.example/v1?api_key=abc123&model=m')).toBe(
      'https://x.example/v1?api_key=***&model=m',
    );
    expect(scrubSecrets('password=hunter2, token: t0k3n')).toBe('password=***, token: ***');
    expect(scrubSecrets(`id ${'a1'.repeat(20)} rejected`)).toBe('id *** rejected');
  });

  it('leaves ordinary messages, hosts and model names alone', () => {
    for (const text of [
      'connect ECONNREFUSED 127.0.0.1:9',
      'The model `claude-3-5-sonnet-20241022` does not exist',
      'Rate limit reached for gpt-4.1-mini in organization org on tokens per min',
      'invalid x-api-key',
    ]) {
      expect(scrubSecrets(text)).toBe(text);
    }
  });
});

describe('scrubMessage', () => {
  const prompt = 'You are expert. PROMPT-MARKER: what does a write-ahead log guarantee?';

  it('keeps the first line, scrubbed, and cuts it to MAX_CAUSE_MESSAGE characters', () => {
    expect(scrubMessage('upstream failed\n  at stack frame', { secrets: [] })).toBe('upstream failed');
    const long = scrubMessage('x '.repeat(200)) ?? '';
    expect([long.length, long.endsWith('…')]).toEqual([MAX_CAUSE_MESSAGE, true]);
  });

  it('gives null for a message that quotes the request', () => {
    expect(scrubMessage(`cannot parse: "PROMPT-MARKER: what does a write"`, { request: [prompt] })).toBeNull();
    expect(scrubMessage('context length exceeded', { request: [prompt] })).toBe('context length exceeded');
    expect(quotesAny('a write-ahead\n  log guarantee? no', [prompt])).toBe(true);
    expect(quotesAny('short', [prompt])).toBe(false);
  });
});
