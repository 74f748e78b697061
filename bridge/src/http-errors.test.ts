import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DisconnectedError, EnvelopeTimeoutError, HubUnavailableError } from '@ag2net/client';
import {
  AccessDeniedError,
  Ag2netError,
  ConflictError,
  ERROR_CODES,
  ErrorCodeSchema,
  HubError,
  InboxFullError,
  ProtocolError,
  WIRE_ERROR_CODES,
  errorFromWire,
} from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpError, httpErrorOf } from './http-errors.js';

// conformance/fixtures/error-codes.json: the HTTP status of every code, as the Python client also reads it.
const FIXTURE = fileURLToPath(new URL('../../conformance/fixtures/error-codes.json', import.meta.url));
const { codes, unknown } = z
  .object({
    codes: z.array(z.object({ code: ErrorCodeSchema, http_status: z.number() })),
    unknown: z.object({ code: z.string(), http_status: z.number() }),
  })
  .parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

describe('http errors', () => {
  it('maps wire codes to statuses and keeps the wire error as the body', () => {
    expect(httpErrorOf(new AccessDeniedError('no')).status).toBe(403);
    expect(httpErrorOf(new ConflictError('c')).status).toBe(409);
    expect(httpErrorOf(new InboxFullError('f')).status).toBe(429);
    expect(httpErrorOf(new ProtocolError('p')).body).toEqual({ error: { code: 'protocol_error', message: 'p' } });
    expect(httpErrorOf(HubError.fromWire({ code: 'brand_new', message: 'x' })).status).toBe(500);
    expect(httpErrorOf(new HubUnavailableError('gone')).status).toBe(503);
    expect(httpErrorOf(new DisconnectedError('bye')).status).toBe(503);
    expect(httpErrorOf(new HttpError('invalid_request', 'big', { status: 413 })).status).toBe(413);
    expect(httpErrorOf(new Error('secret detail')).body).toEqual({
      error: { code: 'internal', message: 'internal error' },
    });
  });

  it('answers every code of error-codes.json with its status, from the wire and from a local error', () => {
    expect(codes.map((c) => c.code)).toEqual([...ERROR_CODES]);
    for (const { code, http_status } of codes) {
      expect({ code, status: httpErrorOf(new Ag2netError(code, 'x')).status }).toEqual({
        code,
        status: http_status,
      });
      expect({ code, status: new HttpError(code, 'x').status }).toEqual({ code, status: http_status });
    }
    for (const code of WIRE_ERROR_CODES) {
      const wire = { code, message: `${code} happened` };
      const status = codes.find((c) => c.code === code)?.http_status;
      expect(httpErrorOf(errorFromWire(wire))).toEqual({ status, body: { error: wire } });
    }
    expect(httpErrorOf(errorFromWire({ code: unknown.code, message: 'x' })).status).toBe(unknown.http_status);
  });

  it("answers the client's local errors with their own code and status", () => {
    expect(httpErrorOf(new HubUnavailableError('no hub answered post within 30000 ms'))).toEqual({
      status: 503,
      body: { error: { code: 'unavailable', message: 'no hub answered post within 30000 ms' } },
    });
    expect(httpErrorOf(new DisconnectedError('alice is disconnected'))).toEqual({
      status: 503,
      body: { error: { code: 'closed', message: 'reconnecting; retry' } },
    });
    expect(httpErrorOf(new EnvelopeTimeoutError('no envelope within 50 ms')).status).toBe(504);
  });

  it('refines only invalid_request with its finer HTTP statuses; a refusal is an Ag2netError', () => {
    const refused = new HttpError('rate_limited', 'too many requests; slow down');
    expect(refused).toBeInstanceOf(Ag2netError);
    expect([refused.code, refused.status, refused.retryable]).toEqual(['rate_limited', 429, true]);
    expect(new HttpError('invalid_request', 'POST only', { status: 405 }).status).toBe(405);
    expect(new HttpError('invalid_request', 'not JSON').status).toBe(400);
  });

  it('keeps the details of a not_found whose history expired: 404 with reason, channel and when', () => {
    const wire = {
      code: 'not_found',
      message: 'the history of channel c1 expired at 2026-01-01T01:00:00.000Z',
      details: { reason: 'expired', channel_id: 'c1', expired_at: '2026-01-01T01:00:00.000Z' },
    };
    expect(httpErrorOf(HubError.fromWire(wire))).toEqual({ status: 404, body: { error: wire } });
  });
});
