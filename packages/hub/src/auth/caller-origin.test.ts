import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { CallerOrigins, REQUEST_INFO_HEADER } from './caller-origin.js';

const ACCOUNT = `A${'B'.repeat(55)}`;
const OTHER = `A${'C'.repeat(55)}`;

/** A JWT-shaped string whose payload holds `iat` (the hub reads the claims; the server verified the signature). */
const jwtIssuedAt = (iat: number): string =>
  `e30.${Buffer.from(JSON.stringify({ iat, name: 'alice' })).toString('base64url')}.sig`;

function msg(reply: string | undefined, info?: Record<string, unknown> | string) {
  const h = headers();
  if (info !== undefined) h.set(REQUEST_INFO_HEADER, typeof info === 'string' ? info : JSON.stringify(info));
  return { reply, headers: info === undefined ? undefined : h };
}

describe('CallerOrigins', () => {
  const origins = new CallerOrigins({ importAccount: ACCOUNT });

  it('serves a request of its own account that carries an inbox reply', () => {
    for (const reply of ['_INBOX.abc.1', '_INBOX_alice-1.x.2', '_HUB_INBOX_ag2.y', '_OPERATOR_INBOX_ag2.z']) {
      expect(origins.of(msg(reply))).toEqual({ ok: true, origin: { kind: 'local' } });
    }
  });

  it('drops a request without a reply, and one whose reply names anything but an inbox', () => {
    expect(origins.of(msg(undefined))).toEqual({ ok: false, reason: 'no reply subject' });
    expect(origins.of(msg(''))).toEqual({ ok: false, reason: 'no reply subject' });
    for (const reply of [
      '$JS.API.STREAM.PURGE.AG2_WAL',
      '$KV.AG2_leases.active',
      'ag2.wal.01JCHANNEL',
      'ag2.hub.v1.unregister.bob',
      '_R_.abc.def',
      '$JS.ACK.AG2_INBOX.agent_bob.1.1.1.0.0',
      '_INBOXX.a',
      'INBOX.a',
    ]) {
      expect(origins.of(msg(reply)), reply).toEqual({ ok: false, reason: 'reply subject is not an inbox' });
    }
  });

  it('serves an imported request with a server-minted reply from the identity account, with who sent it', () => {
    const info = {
      acc: ACCOUNT,
      user: 'UALICE',
      name_tag: 'alice',
      host: '10.0.0.7',
      id: 42,
      server: 'NSRV',
      jwt: jwtIssuedAt(1_700_000_000),
    };
    expect(origins.of(msg('_R_.x1.y2', info))).toEqual({
      ok: true,
      origin: {
        kind: 'imported',
        account: ACCOUNT,
        user: 'UALICE',
        name: 'alice',
        host: '10.0.0.7',
        connection: 'NSRV/42',
        jwtIssuedAt: 1_700_000_000,
      },
    });
  });

  it('drops an imported request from another account, without a server-minted reply, or with unreadable info', () => {
    expect(origins.of(msg('_R_.x', { acc: OTHER }))).toEqual({
      ok: false,
      reason: 'request imported from another account',
    });
    expect(origins.of(msg('$JS.API.STREAM.PURGE.AG2_WAL', { acc: ACCOUNT }))).toEqual({
      ok: false,
      reason: 'imported request without a server-minted reply',
    });
    expect(origins.of(msg('_INBOX.x', { acc: ACCOUNT }))).toEqual({
      ok: false,
      reason: 'imported request without a server-minted reply',
    });
    for (const bad of ['not json', '{"user":"U"}', '[]', `{"acc":"${ACCOUNT}","id":"x"}`, 'x'.repeat(20_000)]) {
      expect(origins.of(msg('_R_.x', bad)), bad.slice(0, 20)).toEqual({ ok: false, reason: 'unreadable request info' });
    }
  });

  it('reads no JWT date from a malformed JWT, and accepts any importing account on a hub without credentials', () => {
    const open = new CallerOrigins({ importAccount: null });
    const verdict = open.of(msg('_R_.x', { acc: OTHER, jwt: 'not.a-jwt.at-all' }));
    expect(verdict).toMatchObject({ ok: true, origin: { kind: 'imported', account: OTHER, jwtIssuedAt: null } });
  });
});
