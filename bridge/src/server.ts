import { HubClient, silentLogger } from '@ag2net/client';
import { AuthError, DEFAULT_PREFIX, MAX_REQUEST_DEPTH, OPERATOR_CALLER } from '@ag2net/protocol';
import { jsonDepthExceeds, repr } from '@ag2net/protocol/internal';
import { watchConnection } from '@ag2net/telemetry';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { a2aGateway } from './a2a/gateway.js';
import { ConsoleFiles, DEFAULT_CONSOLE_DIR } from './console-files.js';
import { HttpError, httpErrorOf } from './http-errors.js';
import { MCP_PATH, mcpGateway } from './mcp-route.js';
import { openApiDocument } from './openapi.js';
import { DEFAULT_BRIDGE_PORT, type BridgeOptions, type ResolvedBridgeOptions } from './options.js';
import { People } from './people.js';
import { RateLimiter, SignInLimiter, rateKeyOf } from './rate-limit.js';
import { bridgeRoutes } from './routes.js';
import { bearerTokenOf, matchRoute, refuseQueryToken, requestTarget, type Actor, type Route } from './route.js';
import { SessionTokens, type SessionClaims } from './session-tokens.js';
import { serveStream } from './serve-stream.js';
import { hubNoLongerServes } from './session-end.js';

/** A running bridge. */
export interface Bridge {
  /** `http://host:port` it listens on. */
  readonly url: string;
  readonly port: number;
  /** What the bridge holds now: read by readiness and the metrics' gauges. */
  state(): BridgeState;
  /** Stops listening, ends the streams and closes every connection. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A bridge's state as readiness and the metrics see it. */
export interface BridgeState {
  /** Whether every NATS connection of the bridge's own (the registrant's, the operator's) is up now. */
  readonly hubConnected: boolean;
  /** People with an identity connection open (or being attached) on this replica. */
  readonly people: number;
}

const VERSION = '0.1.0';

function withDefaults(options: BridgeOptions): ResolvedBridgeOptions {
  return {
    servers: options.servers ?? 'nats://127.0.0.1:4222',
    prefix: options.prefix ?? DEFAULT_PREFIX,
    host: options.host ?? '127.0.0.1',
    port: options.port ?? DEFAULT_BRIDGE_PORT,
    registrantCreds: options.registrantCreds,
    operatorCreds: options.operatorCreds,
    apiKeys: options.apiKeys ?? {},
    secret: options.secret ?? randomBytes(32),
    operatorKey: options.operatorKey,
    anonymousRead: options.anonymousRead ?? false,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    idleMs: options.idleMs ?? 300_000,
    ratePerMinute: options.ratePerMinute ?? 600,
    rateBurst: options.rateBurst ?? 120,
    signInPerMinute: options.signInPerMinute ?? 10,
    signInBurst: options.signInBurst ?? 20,
    maxBodyBytes: options.maxBodyBytes ?? 256 * 1024,
    pollMs: options.pollMs ?? 500,
    hubTimeoutMs: options.hubTimeoutMs ?? 10_000,
    logger: options.logger ?? silentLogger,
    consoleDir: options.consoleDir ?? DEFAULT_CONSOLE_DIR,
    observer: options.observer,
  };
}

/**
 * How the bridge's hub clients wait: retries while no hub answers and each attempt both end by `hubTimeoutMs`, so a
 * request answers `503 unavailable` within about that long (twice it at worst: an attempt started just before the
 * retries ran out) rather than hanging while NATS or every hub stalls.
 */
function hubWait(hubTimeoutMs: number): { retryForMs: number; requestTimeoutMs: number } {
  return { retryForMs: hubTimeoutMs, requestTimeoutMs: hubTimeoutMs };
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Starts the bridge: connects to NATS as the registrant (and as the operator caller when `operatorCreds` is given) and serves
 * the HTTP API. Stateless: any number of replicas with the same secret, keys and hub serve the same people alike.
 */
export async function startBridge(input: BridgeOptions = {}): Promise<Bridge> {
  const options = withDefaults(input);
  const log = options.logger;
  const secured = options.registrantCreds !== undefined;
  const registrant = await HubClient.connect({
    servers: options.servers,
    prefix: options.prefix,
    logger: log,
    ...hubWait(options.hubTimeoutMs),
    ...(options.registrantCreds === undefined ? {} : { creds: options.registrantCreds }),
  });
  // The operator's connection: operators' requests, and anonymous public reads on a secured deployment (the
  // registrant may only register, attach and ask for health; public reads carry no caller and reveal nothing more).
  const operator =
    options.operatorKey === undefined && options.operatorCreds === undefined
      ? null
      : await HubClient.connect({
          servers: options.servers,
          prefix: options.prefix,
          logger: log,
          ...hubWait(options.hubTimeoutMs),
          operator: true,
          ...(options.operatorCreds === undefined ? {} : { creds: options.operatorCreds }),
        });
  const people = new People({
    registrant,
    secured,
    secret: options.secret,
    apiKeys: options.apiKeys,
    idleMs: options.idleMs,
    logger: log,
  });
  const tokens = new SessionTokens(options.secret);
  const limiter = new RateLimiter({ perMinute: options.ratePerMinute, burst: options.rateBurst });
  const signIns = new SignInLimiter({ perMinute: options.signInPerMinute, burst: options.signInBurst });
  const streams = new AbortController();
  const observer = options.observer;
  const watches = [registrant, ...(operator === null ? [] : [operator])].map((c) => watchConnection(c.nc));

  const routes = bridgeRoutes({
    operator,
    signIn: async ({ name, api_key }, address) => {
      // Before the key is compared: guesses are limited too, per name from any address and per address for any name.
      if (!signIns.take(name, address, Date.now())) {
        observer?.rateLimited();
        throw new HttpError('rate_limited', 'too many sign-ins; slow down');
      }
      const isOperator = name === OPERATOR_CALLER;
      if (isOperator) {
        if (options.operatorKey === undefined || !sameSecret(api_key, options.operatorKey)) {
          throw new AuthError('operator key mismatch');
        }
      } else {
        // One answer for a name without a key and a wrong key: a refusal tells nobody which names exist.
        const expected = options.apiKeys[name];
        const matches = sameSecret(api_key, expected ?? '');
        if (expected === undefined || !matches) throw new AuthError(`admission refused for ${repr(name)}`);
        // Attached now, so that a refusal by the hub is the sign-in's answer.
        await people.person(name);
      }
      const iat = Math.floor(Date.now() / 1000);
      const exp = iat + options.tokenTtlSeconds;
      log.info({ person: name, operator: isOperator }, 'signed in');
      return {
        token: tokens.issue({ sub: name, operator: isOperator, iat, exp }),
        expires_at: new Date(exp * 1000).toISOString(),
        name,
        operator: isOperator,
      };
    },
  });
  // A2A's routes answer JSON-RPC and streams their own way: served by the gateway, documented with the others.
  const a2a = a2aGateway({
    authorize: (route, req, query) => authorize(route, req, query),
    readBody: (req) => readJson(req, options.maxBodyBytes),
    people,
    pollMs: options.pollMs,
    stop: streams.signal,
    endSession: (actor) => endSession(actor),
    logger: log,
  });
  // MCP as the signed-in person, over the person's own identity connection.
  const mcp = mcpGateway({
    authorize: (route, req, query) => authorize(route, req, query),
    readBody: (req) => readJson(req, options.maxBodyBytes),
    logger: log,
  });
  const openapi = JSON.stringify(openApiDocument([...routes, ...a2a.routes, ...mcp.routes], VERSION));
  const consoleFiles = ConsoleFiles.load(options.consoleDir);

  /** `claims` is `null` without a token, `'invalid'` for one that does not verify. */
  const actorOf = async (route: Route, claims: SessionClaims | 'invalid' | null): Promise<Actor> => {
    const anonymous: Actor = { role: 'anonymous', name: '', hub: operator ?? registrant, human: null };
    if (route.access === 'open') return anonymous;
    if (claims === null) {
      if (route.access === 'read' && options.anonymousRead) return anonymous;
      throw new AuthError('sign in first: POST /v1/session, then Authorization: Bearer <token>');
    }
    if (claims === 'invalid') throw new AuthError('the token is not valid (expired, or not signed by this bridge)');
    if (claims.operator) {
      if (operator === null || options.operatorKey === undefined) throw new AuthError('this bridge has no operator');
      if (route.access === 'person') throw new HttpError('access_denied', 'the operator reads; it does not act');
      return { role: 'operator', name: OPERATOR_CALLER, hub: operator, human: null };
    }
    if (route.access === 'operator') throw new HttpError('access_denied', 'for the operator only');
    const human = await people.person(claims.sub);
    return { role: 'person', name: claims.sub, hub: human.hub, human };
  };

  /** The actor of a request to `route`, as every route authenticates it: token, rate limit, access. */
  const authorize = async (route: Route, req: IncomingMessage, query: Readonly<Record<string, string>>) => {
    const token = bearerTokenOf(route, req.headers.authorization, query);
    const verified = token === null ? null : tokens.verify(token, Date.now());
    if (!limiter.take(rateKeyOf(verified, req.socket.remoteAddress), Date.now())) {
      observer?.rateLimited();
      throw new HttpError('rate_limited', 'too many requests; slow down');
    }
    refuseQueryToken(route, query);
    return actorOf(route, token === null ? null : (verified ?? 'invalid'));
  };

  /** Closes a person's connection on this replica: their session is over (see `endSessionOf`). */
  const endSession = async (actor: Actor): Promise<void> => {
    await people.forget(actor.name);
    log.warn({ person: actor.name }, 'session ended: the hub no longer serves this identity');
  };

  /**
   * A person whose identity the hub no longer serves (revoked, unregistered, or its credentials replaced) has no
   * session any more: its connection here is closed, and the request is answered 401, as every later one is (the
   * hub refuses to admit it again until the operator re-admits it).
   */
  const endSessionOf = async (actor: Actor, err: unknown): Promise<never> => {
    if (actor.role !== 'person' || !hubNoLongerServes(err)) throw err;
    await endSession(actor);
    throw new AuthError('this session ended: the hub no longer serves this identity; sign in again', { cause: err });
  };

  /** `seen.route` is the route template once matched: the metrics' label (`unmatched` until then). */
  const handle = async (req: IncomingMessage, res: ServerResponse, seen: { route: string }): Promise<void> => {
    // A malformed target (bad percent-encoding in the path or the query) is a 400 before anything else.
    const { path, query } = requestTarget(req.url ?? '/');
    if (req.method === 'GET' && path === '/healthz') {
      seen.route = path;
      return sendJson(res, 200, { ok: true });
    }
    if (a2a.serves(path)) {
      seen.route = a2a.label(req.method ?? 'GET', path);
      return a2a.serve(req, res, { path, query });
    }
    if (mcp.serves(path)) {
      seen.route = MCP_PATH;
      return mcp.serve(req, res, { query });
    }
    if (req.method === 'GET' && path === '/v1/openapi.json') {
      seen.route = path;
      res.writeHead(200, { 'content-type': 'application/json' }).end(openapi);
      return;
    }
    // HEAD too: Node sends a HEAD response's headers without its body.
    if ((req.method === 'GET' || req.method === 'HEAD') && ConsoleFiles.serves(path)) {
      seen.route = path.startsWith('/assets/') ? '/assets/{file}' : '/';
      return consoleFiles.serve(path, res);
    }
    const found = matchRoute(routes, req.method ?? 'GET', path);
    if (found === null) throw new HttpError('not_found', `no route ${req.method ?? ''} ${path}`);
    if (found === 'method')
      throw new HttpError('invalid_request', `${req.method ?? ''} is not allowed here`, { status: 405 });
    seen.route = found.route.path;
    const token = bearerTokenOf(found.route, req.headers.authorization, query);
    const verified = token === null ? null : tokens.verify(token, Date.now());
    // One budget per person however many tokens they hold; without a valid token, the client address's.
    if (!limiter.take(rateKeyOf(verified, req.socket.remoteAddress), Date.now())) {
      observer?.rateLimited();
      throw new HttpError('rate_limited', 'too many requests; slow down');
    }
    refuseQueryToken(found.route, query);
    const actor = await actorOf(found.route, token === null ? null : (verified ?? 'invalid'));
    if (found.route.response === null) {
      // What it throws comes before the response starts (the first reads): an HTTP error, as a route's.
      await serveStream({
        route: found.route,
        actor,
        params: found.params,
        query,
        req,
        res,
        people,
        pollMs: options.pollMs,
        stop: streams.signal,
        ...(observer === undefined ? {} : { streamsChanged: (delta: 1 | -1) => observer.streamsChanged(delta) }),
        endSession,
      }).catch((err: unknown) => endSessionOf(actor, err));
      return;
    }
    const body = found.route.body === null ? undefined : await readJson(req, options.maxBodyBytes);
    const result = await found.route
      .handle({ actor, address: req.socket.remoteAddress, params: found.params, query, body })
      .catch((err: unknown) => endSessionOf(actor, err));
    sendJson(res, found.route.status, result);
  };

  const server = createServer((req, res) => {
    const seen = { route: 'unmatched' };
    if (observer !== undefined) {
      const started = performance.now();
      res.once('close', () => {
        const seconds = (performance.now() - started) / 1000;
        observer.requestFinished({ route: seen.route, status: res.statusCode, seconds });
      });
    }
    handle(req, res, seen).catch((err: unknown) => {
      const { status, body } = httpErrorOf(err);
      if (status >= 500) log.error({ err, path: req.url }, 'request failed');
      if (res.headersSent) {
        res.end();
        return;
      }
      // A body refused before it was read whole leaves the rest of it on the connection: it cannot carry another request.
      if (status === 413) res.setHeader('connection', 'close');
      sendJson(res, status, body);
    });
  });
  server.listen(options.port, options.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? (address satisfies AddressInfo).port : options.port;
  const url = `http://${options.host}:${port}`;
  log.info({ url, secured, operator: operator !== null, anonymousRead: options.anonymousRead }, 'bridge listening');

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      streams.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      mcp.close();
      await people.close();
      await operator?.close();
      await registrant.close();
    })();
    return closing;
  };
  const state = (): BridgeState => ({ hubConnected: watches.every((w) => w.connected()), people: people.size });
  return { url, port, state, close, [Symbol.asyncDispose]: close };
}

async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > maxBytes) throw new HttpError('invalid_request', `the body exceeds ${maxBytes} bytes`, { status: 413 });
    chunks.push(buf);
  }
  if (size === 0) return {};
  if (!/^application\/json\b/i.test(type)) {
    throw new HttpError('invalid_request', 'the body must be application/json', { status: 415 });
  }
  const text = Buffer.concat(chunks).toString('utf8');
  // Checked before parsing, with the hub's own bound: a deeper body would overflow a stack where it is serialized.
  if (jsonDepthExceeds(text, MAX_REQUEST_DEPTH)) {
    throw new HttpError('invalid_request', `the body nests deeper than ${MAX_REQUEST_DEPTH} levels`);
  }
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch {
    throw new HttpError('invalid_request', 'the body is not JSON');
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
}
