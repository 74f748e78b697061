import { AuthError, InvalidRequestError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { httpErrorOf } from './http-errors.js';
import { bearerTokenOf, matchRoute, refuseQueryToken, requestTarget, type Route } from './route.js';
import { bridgeRoutes } from './routes.js';

const routes = bridgeRoutes({ operator: null, signIn: () => Promise.reject(new Error('not called')) });

function routeOf(method: string, path: string): Route {
  const found = routes.find((r) => r.method === method && r.path === path);
  if (found === undefined) throw new Error(`no route ${method} ${path}`);
  return found;
}

/** The status and body a request gets for what `fn` throws. */
function answerOf(fn: () => unknown): { status: number; body: unknown } {
  try {
    fn();
  } catch (err) {
    return httpErrorOf(err);
  }
  throw new Error('nothing thrown');
}

/** What the bridge answers a request line up to its route: its target read, then its route matched. */
function dispatch(method: string, raw: string) {
  const { path, query } = requestTarget(raw);
  return { found: matchRoute(routes, method, path), query };
}

const MALFORMED = ['%', '%Z', '%ZZ', '%E0%A4%A', '%C3', '%FF', '%ED%A0%80'];

describe('request targets', () => {
  it('decodes path parameters and the query, + as a space in the query only', () => {
    const { found, query } = dispatch('GET', '/v1/agents/caf%C3%A9%2Fbar+x?query=a+b%26c&limit=5&limit=7');
    expect(found !== null && found !== 'method' ? [found.route.path, found.params] : found).toEqual([
      '/v1/agents/{name_or_id}',
      { name_or_id: 'café/bar+x' },
    ]);
    expect(query).toEqual({ query: 'a b&c', limit: '7' });
    expect(requestTarget('/v1/agents?__proto__=x&flag').query).toEqual(
      Object.fromEntries([
        ['__proto__', 'x'],
        ['flag', ''],
      ]),
    );
  });

  it.each(MALFORMED)('answers 400 invalid_request to %s in a path parameter, the query or a name', (bad) => {
    for (const raw of [
      `/v1/agents/${bad}`,
      `/v1/channels/${bad}/log`,
      `/v1/agents/x${bad}y/resume`,
      `/v1/agents?query=${bad}`,
      `/v1/channels/c/log?since=1&until=${bad}`,
      `/v1/agents?${bad}=1`,
      `/v1/channels/c/stream?access_token=t&last_event_id=${bad}`,
      `/v1/no-such-route/${bad}`,
      `/assets/${bad}.js`,
    ]) {
      const answer = answerOf(() => dispatch('GET', raw));
      const where = raw.includes('?') ? 'query string' : 'path';
      expect([raw, answer.status, answer.body]).toEqual([
        raw,
        400,
        { error: { code: 'invalid_request', message: `the ${where} is not valid percent-encoding (UTF-8)` } },
      ]);
    }
  });

  it('names the malformed part without echoing it', () => {
    expect(() => requestTarget('/v1/agents/%ZZ')).toThrow(
      new InvalidRequestError('the path is not valid percent-encoding (UTF-8)'),
    );
    expect(() => matchRoute(routes, 'GET', '/v1/channels/%E0%A4%A/log')).toThrow(
      new InvalidRequestError('the path is not valid percent-encoding (UTF-8)'),
    );
    expect(() => requestTarget('/v1/agents?query=%3Cscript%3E%ZZ')).toThrow(
      new InvalidRequestError('the query string is not valid percent-encoding (UTF-8)'),
    );
  });

  it('matches a route by method, and tells a wrong method from no route', () => {
    expect(matchRoute(routes, 'DELETE', '/v1/agents')).toBe('method');
    expect(matchRoute(routes, 'GET', '/v2/agents')).toBeNull();
    const found = matchRoute(routes, 'POST', '/v1/channels/abc/envelopes');
    expect(found !== null && found !== 'method' ? [found.route.path, found.params] : found).toEqual([
      '/v1/channels/{channel_id}/envelopes',
      { channel_id: 'abc' },
    ]);
  });
});

describe('where a token may travel', () => {
  const me = routeOf('GET', '/v1/me');
  const agents = routeOf('GET', '/v1/agents');
  const post = routeOf('POST', '/v1/channels/{channel_id}/envelopes');
  const signIn = routeOf('POST', '/v1/session');
  const channelStream = routeOf('GET', '/v1/channels/{channel_id}/stream');
  const deliveries = routeOf('GET', '/v1/me/stream');

  it('takes the Authorization: Bearer header on every route', () => {
    for (const r of routes) expect([r.path, bearerTokenOf(r, 'Bearer t1', {})]).toEqual([r.path, 't1']);
    expect(bearerTokenOf(me, 'bearer   t1', {})).toBe('t1');
    expect(bearerTokenOf(me, 'Basic dTpw', {})).toBeNull();
    expect(bearerTokenOf(me, undefined, {})).toBeNull();
  });

  it('takes ?access_token= on the event streams only, the header first', () => {
    expect(routes.filter((r) => r.response === null).map((r) => r.path)).toEqual([
      '/v1/me/stream',
      '/v1/channels/{channel_id}/stream',
    ]);
    expect(bearerTokenOf(channelStream, undefined, { access_token: 'q' })).toBe('q');
    expect(bearerTokenOf(deliveries, undefined, { access_token: 'q' })).toBe('q');
    expect(bearerTokenOf(deliveries, 'Bearer h', { access_token: 'q' })).toBe('h');
    expect(bearerTokenOf(me, undefined, { access_token: 'q' })).toBeNull();
    expect(() => refuseQueryToken(channelStream, { access_token: 'q' })).not.toThrow();
    expect(() => refuseQueryToken(me, {})).not.toThrow();
  });

  it('refuses ?access_token= on every other route with 401 saying to use the header', () => {
    for (const r of [me, agents, post, signIn]) {
      for (const token of ['q', '']) {
        const answer = answerOf(() => refuseQueryToken(r, { access_token: token }));
        expect([r.path, answer]).toEqual([
          r.path,
          {
            status: 401,
            body: {
              error: {
                code: 'auth_failed',
                message:
                  'send the token in the Authorization: Bearer header: ?access_token= is taken by the event streams only',
              },
            },
          },
        ]);
      }
    }
    expect(() => refuseQueryToken(me, { access_token: 'q' })).toThrow(AuthError);
  });
});
