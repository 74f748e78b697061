import { HubUnavailableError } from '@ag2net/client';
import { AccessDeniedError, AuthError, InternalError, NotFoundError, UnavailableError } from '@ag2net/protocol';
import { errors } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CliError, ExitCode, diagnose, usageError } from './exit.js';

describe('diagnose', () => {
  it('maps every failure to its documented exit code', () => {
    const zod = z.object({ state: z.enum(['active']) }).safeParse({ state: 'x' });
    const cases: [unknown, number][] = [
      [new NotFoundError('no agent'), ExitCode.NotFound],
      [new AccessDeniedError('not a participant'), ExitCode.AccessDenied],
      [new AuthError('api_key mismatch'), ExitCode.AccessDenied],
      [new UnavailableError('electing'), ExitCode.Unavailable],
      [new HubUnavailableError('no hub answered health within 5000 ms'), ExitCode.Unavailable],
      [
        new Error('wrapped', { cause: new errors.PermissionViolationError('Permissions Violation', 'publish', 'x') }),
        4,
      ],
      [new errors.ConnectionError('connection refused'), ExitCode.Unavailable],
      [new InternalError('boom'), ExitCode.Error],
      [new Error('anything else'), ExitCode.Error],
      [zod.success ? null : zod.error, ExitCode.Usage],
      [usageError('bad flag'), ExitCode.Usage],
      [new CliError('refused', ExitCode.AccessDenied, { hint: 'pass --operator' }), ExitCode.AccessDenied],
    ];
    expect(cases.map(([err]) => diagnose(err).exitCode)).toEqual(cases.map(([, code]) => code));
  });

  it('names the fix for refusals and unreachable hubs', () => {
    expect(diagnose(new AccessDeniedError('x')).hint).toContain('--creds');
    expect(diagnose(new HubUnavailableError('x')).hint).toContain('NATS_URL');
    expect(diagnose(new NotFoundError('x')).message).toBe('not_found: x');
  });
});
