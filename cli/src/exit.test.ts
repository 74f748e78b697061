import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CredentialsError, HubUnavailableError } from '@ag2net/client';
import {
  AccessDeniedError,
  Ag2netError,
  AuthError,
  ErrorCodeSchema,
  InternalError,
  InvalidRequestError,
  NotFoundError,
  UnavailableError,
  errorFromWire,
} from '@ag2net/protocol';
import { errors } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CliError, ExitCode, diagnose, usageError } from './exit.js';
import { OtherKeyError } from './person-key.js';

// conformance/fixtures/error-codes.json: the exit code of every code, as the Python client also reads it.
const FIXTURE = fileURLToPath(new URL('../../conformance/fixtures/error-codes.json', import.meta.url));
const { codes, unknown } = z
  .object({
    codes: z.array(z.object({ code: ErrorCodeSchema, scope: z.string(), exit_code: z.number() })),
    unknown: z.object({ code: z.string(), exit_code: z.number() }),
  })
  .parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

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
      [new InvalidRequestError('name: too long'), ExitCode.Usage],
      [new Error('anything else'), ExitCode.Error],
      [zod.success ? null : zod.error, ExitCode.Usage],
      [usageError('bad flag'), ExitCode.Usage],
      [new CliError('refused', 'access_denied', { hint: 'pass --operator' }), ExitCode.AccessDenied],
      [new CredentialsError('not a JWT: no payload part'), ExitCode.Usage],
      [new OtherKeyError('alice'), ExitCode.AccessDenied],
    ];
    expect(cases.map(([err]) => diagnose(err).exitCode)).toEqual(cases.map(([, code]) => code));
  });

  it('exits with the code error-codes.json gives every code, from the hub, a local error or the command', () => {
    for (const { code, scope, exit_code } of codes) {
      const local = new Ag2netError(code, 'x');
      const command = new CliError('x', code);
      expect({ code, local: diagnose(local).exitCode, command: command.exitCode }).toEqual({
        code,
        local: exit_code,
        command: exit_code,
      });
      if (scope === 'wire') expect(diagnose(errorFromWire({ code, message: 'x' })).exitCode).toBe(exit_code);
    }
    expect(diagnose(errorFromWire({ code: unknown.code, message: 'x' })).exitCode).toBe(unknown.exit_code);
  });

  it('names the fix for refusals and unreachable hubs', () => {
    expect(diagnose(new AccessDeniedError('x')).hint).toContain('--creds');
    expect(diagnose(new HubUnavailableError('x')).hint).toContain('NATS_URL');
    expect(diagnose(new NotFoundError('x')).message).toBe('not_found: x');
  });

  it('makes every command failure an Ag2netError whose exit code follows its code', () => {
    const err = usageError('bad flag', 'see --help');
    expect(err).toBeInstanceOf(Ag2netError);
    expect([err.code, err.exitCode, err.retryable, err.hint]).toEqual(['invalid_request', 2, false, 'see --help']);
    const other = new OtherKeyError('alice');
    expect(other).toBeInstanceOf(Ag2netError);
    expect([other.code, other.person]).toEqual(['auth_failed', 'alice']);
  });
});
