import { CredentialsError, DisconnectedError, EnvelopeTimeoutError, HubUnavailableError } from '@ag2net/client';
import { AccessDeniedError, Ag2netError, NotFoundError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { ToolFailure, toolErrorOf } from './errors.js';
import { IdentityError } from './identity.js';

describe('toolErrorOf', () => {
  it("keeps a network error's stable code and message", () => {
    expect(toolErrorOf(new NotFoundError('channel not found: c1'))).toEqual({
      code: 'not_found',
      text: 'not_found: channel not found: c1',
    });
    expect(toolErrorOf(new AccessDeniedError('no')).code).toBe('access_denied');
  });

  it('gives local failures their own codes and hides what an unknown error says', () => {
    expect(toolErrorOf(new EnvelopeTimeoutError('no envelope within 5 ms')).code).toBe('timeout');
    expect(toolErrorOf(new ToolFailure('invalid_request', 'bad')).text).toBe('invalid_request: bad');
    const secret = new Error('ENOENT: /home/me/.data/auth/SUAKEYSEED');
    expect(toolErrorOf(secret)).toEqual({
      code: 'internal',
      text: 'internal: the request failed inside the MCP server',
    });
  });

  it("keeps a local error's code, and says what it says only when that names no file", () => {
    expect(toolErrorOf(new HubUnavailableError('no hub answered post within 30000 ms')).text).toBe(
      'unavailable: no hub answered',
    );
    expect(toolErrorOf(new DisconnectedError('alice is disconnected')).text).toBe(
      'closed: this identity is disconnected',
    );
    expect(toolErrorOf(new CredentialsError('/home/me/.data/alice.creds is not a .creds file')).text).toBe(
      'invalid_config: the request failed inside the MCP server',
    );
  });

  it('makes its own errors Ag2netErrors with a code of the list', () => {
    const failure = new ToolFailure('not_found', 'no tool named x');
    const identity = new IdentityError('alice.creds is not a .creds file');
    expect(failure).toBeInstanceOf(Ag2netError);
    expect(identity).toBeInstanceOf(Ag2netError);
    expect([failure.code, failure.retryable, identity.name, identity.code, identity.retryable]).toEqual([
      'not_found',
      false,
      'IdentityError',
      'invalid_config',
      false,
    ]);
  });

  it('cuts a long message', () => {
    expect(toolErrorOf(new ToolFailure('invalid_request', 'x'.repeat(5000))).text.length).toBeLessThanOrEqual(
      'invalid_request: '.length + 500,
    );
  });
});
