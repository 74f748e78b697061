import { APICallError, JSONParseError, LoadAPIKeyError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { causeLine, modelErrorCause, promptTexts } from './cause.js';
import { modelIdentity } from './identity.js';
import { createScriptedModel } from './scripted.js';

const URL_ = 'http://127.0.0.1:9/v1/chat/completions';

/** What the AI SDK throws when fetch cannot connect: an APICallError around the system error. */
function unreachable(system: Error): APICallError {
  return new APICallError({
    message: `Cannot connect to API: ${system.message}`,
    url: URL_,
    requestBodyValues: {},
    cause: system,
    isRetryable: true,
  });
}

function systemError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('modelErrorCause', () => {
  it('names an unreachable endpoint by its system error and address', () => {
    const refused = systemError('connect ECONNREFUSED 127.0.0.1:9', {
      code: 'ECONNREFUSED',
      address: '127.0.0.1',
      port: 9,
    });
    expect(modelErrorCause(unreachable(refused))).toEqual({
      kind: 'connection',
      exc_type: 'APICallError',
      code: 'ECONNREFUSED',
      message: 'ECONNREFUSED 127.0.0.1:9',
    });
    const dns = systemError('getaddrinfo ENOTFOUND llm.invalid', { code: 'ENOTFOUND', hostname: 'llm.invalid' });
    expect(modelErrorCause(unreachable(dns))).toMatchObject({ code: 'ENOTFOUND', message: 'ENOTFOUND 127.0.0.1:9' });
    // fetch refuses some ports outright, with no system code.
    expect(modelErrorCause(unreachable(new Error('bad port')))).toEqual({
      kind: 'connection',
      exc_type: 'APICallError',
      message: 'bad port 127.0.0.1:9',
    });
    const both = new AggregateError([refused], 'connect failed');
    expect(modelErrorCause(unreachable(both))).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('names an HTTP error by status, the provider’s code and its message, scrubbed', () => {
    const err = new APICallError({
      message: 'invalid x-api-key: sk-ant-api03-secretsecret',
      url: URL_,
      requestBodyValues: {},
      statusCode: 401,
      data: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    });
    const cause = modelErrorCause(err);
    expect(cause).toEqual({
      kind: 'http',
      exc_type: 'APICallError',
      status: 401,
      code: 'authentication_error',
      message: 'invalid x-api-key: ***',
    });
    expect(causeLine(cause)).toBe('401 authentication_error: invalid x-api-key: ***');
  });

  it('says what was wrong with an unreadable answer without quoting it, and names a missing key', () => {
    const parse = new JSONParseError({ text: '{"secret": "the body"', cause: new Error('Unexpected end') });
    expect(modelErrorCause(parse)).toEqual({
      kind: 'malformed_output',
      exc_type: 'JSONParseError',
      message: 'the answer is not valid JSON',
    });
    expect(modelErrorCause(new LoadAPIKeyError({ message: 'OpenAI API key is missing.' }))).toEqual({
      kind: 'config',
      exc_type: 'LoadAPIKeyError',
      message: 'OpenAI API key is missing.',
    });
  });
});

describe('causeLine', () => {
  it('puts a connection’s message alone, and a bare kind when nothing else is known', () => {
    expect(
      causeLine({
        kind: 'connection',
        code: 'ECONNREFUSED',
        message: 'ECONNREFUSED 127.0.0.1:9',
      }),
    ).toBe('ECONNREFUSED 127.0.0.1:9');
    expect(causeLine({ kind: 'http', status: 400, code: 'bad_request' })).toBe('400 bad_request');
    expect(causeLine({ kind: 'timeout' })).toBe('timeout');
  });
});

describe('promptTexts', () => {
  it('collects the system, user, assistant and tool texts of a prompt', () => {
    expect(
      promptTexts([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: { q: 1 } }] },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'text', value: 'v' } }],
        },
      ]),
    ).toEqual(['be brief', 'hi', '{"q":1}', '{"type":"text","value":"v"}']);
  });
});

describe('modelIdentity', () => {
  it('names the scripted model and the AI SDK’s providers as a passport does', () => {
    const of = (provider: string, modelId: string) => modelIdentity({ provider, modelId });
    expect([
      modelIdentity(createScriptedModel([])),
      of('openai.responses', 'gpt-4.1-mini'),
      of('anthropic.messages', 'claude-sonnet-4-5'),
      of('openai-compatible.chat', 'llama3.2'),
      of('mistral', 'small'),
    ]).toEqual([
      { provider: 'scripted', model: 'scripted' },
      { provider: 'openai', model: 'gpt-4.1-mini' },
      { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      { provider: 'openai-compatible', model: 'llama3.2' },
      { provider: 'mistral', model: 'small' },
    ]);
  });
});
