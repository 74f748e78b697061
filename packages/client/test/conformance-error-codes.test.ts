import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as protocol from '@ag2net/protocol';
import { Ag2netError, isRetryableCode } from '@ag2net/protocol';
import {
  CredentialsError,
  DisconnectedError,
  EnvelopeTimeoutError,
  HubUnavailableError,
  IdentityCredentialsError,
  InboxClosedError,
  SubscriptionOverflowError,
  TurnAbortedError,
  TurnLockLostError,
} from '@ag2net/client';

// conformance/fixtures/error-codes.json, `classes`: the code of each error class both clients have. The Python client
// checks the same file (clients/python/tests/test_error_codes.py); the protocol's classes are checked in
// packages/protocol/test/error-codes.test.ts.
const FIXTURE = fileURLToPath(new URL('../../../conformance/fixtures/error-codes.json', import.meta.url));
const { classes } = z
  .object({ classes: z.array(z.object({ name: z.string(), code: z.string(), hub_error: z.boolean() })) })
  .parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

/** Every error class of the client, made with a message. */
const CLIENT_ERRORS: readonly Ag2netError[] = [
  new HubUnavailableError('no hub answered post within 30000 ms'),
  new EnvelopeTimeoutError('no envelope within 50 ms'),
  new DisconnectedError('alice is disconnected'),
  new TurnLockLostError('the turn lock of c1 was lost'),
  new CredentialsError('not a JWT: no payload part'),
  new IdentityCredentialsError('the credentials belong to bob'),
  new InboxClosedError('the inbox of alice closed'),
  new TurnAbortedError('the turns were aborted'),
  new SubscriptionOverflowError(8),
];

describe('client errors (conformance/fixtures/error-codes.json)', () => {
  it('gives each client class the fixture lists its code, and its retryability from the code', () => {
    const protocolNames = new Set(Object.keys(protocol));
    const listed = classes.filter((c) => !protocolNames.has(c.name));
    const ours = new Map(CLIENT_ERRORS.map((err) => [err.name, err]));
    expect(listed.length).toBe(6);
    expect(listed.every((c) => !c.hub_error)).toBe(true);
    for (const { name, code } of listed) {
      const err = ours.get(name);
      expect({ name, code: err?.code, retryable: err?.retryable }).toEqual({
        name,
        code,
        retryable: isRetryableCode(code),
      });
    }
  });

  it.each(CLIENT_ERRORS.map((err) => [err.name, err] as const))(
    '%s is an Ag2netError with a code of the list and no HubError',
    (_name, err) => {
      expect(err).toBeInstanceOf(Ag2netError);
      expect(err).not.toBeInstanceOf(protocol.HubError);
      expect(protocol.isErrorCode(err.code)).toBe(true);
      expect(protocol.isFinalError(err)).toBe(false);
    },
  );

  it('gives the client-only classes the codes closed, cancelled and closed', () => {
    expect(
      [new InboxClosedError('x'), new TurnAbortedError('x'), new SubscriptionOverflowError(1)].map((e) => [
        e.name,
        e.code,
        e.retryable,
      ]),
    ).toEqual([
      ['InboxClosedError', 'closed', false],
      ['TurnAbortedError', 'cancelled', false],
      ['SubscriptionOverflowError', 'closed', false],
    ]);
  });
});
