import { DisconnectedError, HubUnavailableError } from '@ag2net/client';
import { AccessDeniedError, ConflictError, InboxFullError, NetworkError, ProtocolError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { HttpError, httpErrorOf } from './http-errors.js';

describe('http errors', () => {
  it('maps wire codes to statuses and keeps the wire error as the body', () => {
    expect(httpErrorOf(new AccessDeniedError('no')).status).toBe(403);
    expect(httpErrorOf(new ConflictError('c')).status).toBe(409);
    expect(httpErrorOf(new InboxFullError('f')).status).toBe(429);
    expect(httpErrorOf(new ProtocolError('p')).body).toEqual({ error: { code: 'protocol_error', message: 'p' } });
    expect(httpErrorOf(NetworkError.fromWire({ code: 'brand_new', message: 'x' })).status).toBe(500);
    expect(httpErrorOf(new HubUnavailableError('gone')).status).toBe(503);
    expect(httpErrorOf(new DisconnectedError('bye')).status).toBe(503);
    expect(httpErrorOf(new HttpError(413, 'invalid_request', 'big')).status).toBe(413);
    expect(httpErrorOf(new Error('secret detail')).body).toEqual({
      error: { code: 'internal', message: 'internal error' },
    });
  });

  it('keeps the details of a not_found whose history expired: 404 with reason, channel and when', () => {
    const wire = {
      code: 'not_found',
      message: 'the history of channel c1 expired at 2026-01-01T01:00:00.000Z',
      details: { reason: 'expired', channel_id: 'c1', expired_at: '2026-01-01T01:00:00.000Z' },
    };
    expect(httpErrorOf(NetworkError.fromWire(wire))).toEqual({ status: 404, body: { error: wire } });
  });
});
