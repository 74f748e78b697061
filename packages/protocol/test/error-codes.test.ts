import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AccessDeniedError,
  Ag2netError,
  AuthError,
  ConflictError,
  ERROR_CODES,
  ERROR_CODE_INFO,
  ExitCode,
  HubError,
  InboxFullError,
  InternalError,
  InvalidRequestError,
  NotFoundError,
  ProtocolError,
  RETRYABLE_ERROR_CODES,
  UnavailableError,
  WIRE_ERROR_CODES,
  errorCodeInfo,
  exitCodeOf,
  httpStatusOf,
  isRetryableCode,
} from '../src/index.js';

// conformance/fixtures/error-codes.json is the same table for every client: the Python client reads it too
// (clients/python/tests/test_error_codes.py), so neither can change a code's meaning alone.
const FIXTURE = fileURLToPath(new URL('../../../conformance/fixtures/error-codes.json', import.meta.url));

const Mapping = z.strictObject({ retryable: z.boolean(), http_status: z.number(), exit_code: z.number() });
const ErrorCodesFixture = z.strictObject({
  codes: z.array(Mapping.extend({ code: z.string(), scope: z.string() })),
  unknown: Mapping.extend({ code: z.string() }),
  exit_codes: z.record(z.string(), z.number()),
  classes: z.array(z.strictObject({ name: z.string(), code: z.string(), hub_error: z.boolean() })),
});

const fixture = ErrorCodesFixture.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

/** The rows of the table under `## Codes` in docs/errors.md: code, scope, retryable, HTTP status, exit code. */
function documentedCodes(): string[][] {
  const text = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8');
  const section = text.slice(text.indexOf('## Codes'));
  const table = section.split('\n\n').find((block) => block.startsWith('|')) ?? '';
  return table
    .split('\n')
    .slice(2)
    .map((row) => row.split('|').map((cell) => cell.trim().replaceAll('`', '')))
    .map((cells) => cells.slice(1, 6));
}

const PROTOCOL_CLASSES: ReadonlyMap<string, new (message: string) => HubError> = new Map(
  [
    HubError,
    NotFoundError,
    AccessDeniedError,
    AuthError,
    ProtocolError,
    InboxFullError,
    InvalidRequestError,
    InternalError,
    ConflictError,
    UnavailableError,
  ].map((C) => [new C('x').name, C]),
);

describe('error codes (conformance/fixtures/error-codes.json)', () => {
  it('lists the same codes in the same order, each with its scope, retryability, HTTP status and exit code', () => {
    const ours = ERROR_CODES.map((code) => {
      const info = ERROR_CODE_INFO[code];
      return {
        code,
        scope: info.scope,
        retryable: info.retryable,
        http_status: info.httpStatus,
        exit_code: info.exitCode,
      };
    });
    expect(ours).toEqual(fixture.codes);
  });

  it('maps every code through the lookup functions as the fixture says', () => {
    for (const c of fixture.codes) {
      expect({
        code: c.code,
        retryable: isRetryableCode(c.code),
        http: httpStatusOf(c.code),
        exit: exitCodeOf(c.code),
      }).toEqual({ code: c.code, retryable: c.retryable, http: c.http_status, exit: c.exit_code });
    }
  });

  it('treats a code this version does not know like internal', () => {
    const { code, retryable, http_status, exit_code } = fixture.unknown;
    expect(errorCodeInfo(code)).toEqual(ERROR_CODE_INFO.internal);
    expect([isRetryableCode(code), httpStatusOf(code), exitCodeOf(code)]).toEqual([retryable, http_status, exit_code]);
  });

  it('numbers the exit codes as the fixture does', () => {
    expect(ExitCode).toEqual({
      Ok: fixture.exit_codes['ok'],
      Error: fixture.exit_codes['error'],
      Usage: fixture.exit_codes['usage'],
      NotFound: fixture.exit_codes['not_found'],
      AccessDenied: fixture.exit_codes['access_denied'],
      Unavailable: fixture.exit_codes['unavailable'],
    });
  });

  it('has the wire scope for exactly the wire codes, and retries only unavailable among them', () => {
    const wire = fixture.codes.filter((c) => c.scope === 'wire').map((c) => c.code);
    expect(wire).toEqual([...WIRE_ERROR_CODES]);
    expect(fixture.codes.filter((c) => c.scope === 'wire' && c.retryable).map((c) => c.code)).toEqual([
      ...RETRYABLE_ERROR_CODES,
    ]);
  });

  it('gives each protocol class of the fixture its code and retryability, under Ag2netError', () => {
    const listed = fixture.classes.filter((c) => PROTOCOL_CLASSES.has(c.name));
    expect(listed.map((c) => c.name)).toEqual([...PROTOCOL_CLASSES.keys()]);
    expect(listed.every((c) => c.hub_error)).toBe(true);
    for (const { name, code } of listed) {
      const Class = PROTOCOL_CLASSES.get(name);
      expect(Class).toBeDefined();
      if (Class === undefined) continue;
      const err = new Class('x');
      expect(err).toBeInstanceOf(Ag2netError);
      expect({ name: err.name, code: err.code, retryable: err.retryable }).toEqual({
        name,
        code,
        retryable: isRetryableCode(code),
      });
    }
  });

  it('is documented in docs/errors.md, one row per code with its scope, retryability, HTTP status and exit code', () => {
    expect(documentedCodes()).toEqual(
      fixture.codes.map((c) => [
        c.code,
        c.scope,
        c.retryable ? 'yes' : 'no',
        String(c.http_status),
        String(c.exit_code),
      ]),
    );
  });
});
