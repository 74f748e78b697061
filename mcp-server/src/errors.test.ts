import { EnvelopeTimeoutError } from '@ag2net/client';
import { AccessDeniedError, NotFoundError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { ToolFailure, toolErrorOf } from './errors.js';

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

  it('cuts a long message', () => {
    expect(toolErrorOf(new ToolFailure('invalid_request', 'x'.repeat(5000))).text.length).toBeLessThanOrEqual(
      'invalid_request: '.length + 500,
    );
  });
});
