import type { HubCallOptions, HumanClient } from '@ag2net/client';
import { formatIssues } from '@ag2net/protocol/internal';
import { AuthError, InvalidRequestError, type HubOp, type HubRequest, type HubResponse } from '@ag2net/protocol';
import type { z } from 'zod';

/**
 * Who may call a route. `open`: anyone, no token (sign-in, the OpenAPI document). `read`: the hub's public reads,
 * for anyone signed in, and without a token when the bridge runs with `--anonymous-read`. `member`: a person as
 * themself, or the operator as `$operator` (the hub decides what each sees). `person`: writes, people only.
 * `operator`: the operator only.
 */
export type RouteAccess = 'open' | 'read' | 'member' | 'person' | 'operator';

/** Calls the hub as the actor: a person's own identity connection, the operator's, or the registrant's. */
export interface ActorHub {
  call<Op extends HubOp>(op: Op, request: HubRequest<Op>, options?: HubCallOptions): Promise<HubResponse<Op>>;
  /** How many partitions the deployment spreads its channels over (`channelsPage` lists them all). */
  partitions(): Promise<number>;
}

/** Who a request acts as. */
export interface Actor {
  readonly role: 'person' | 'operator' | 'anonymous';
  /** The person's name, `$operator`, or `''` for an anonymous reader. */
  readonly name: string;
  readonly hub: ActorHub;
  /** The person's participant (their own identity connection); `null` for the operator and anonymous readers. */
  readonly human: HumanClient | null;
}

/** A request as a route handler sees it: path parameters, the parsed query and body. */
export interface RouteInput<Q, B> {
  readonly actor: Actor;
  /** The client's address (the connection's peer); `undefined` once the socket closed. */
  readonly address: string | undefined;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Q;
  readonly body: B;
}

/** What `route()` keeps of a route: its contract (for dispatch and the OpenAPI document) and an untyped entry. */
export interface Route {
  readonly method: 'GET' | 'POST';
  /** OpenAPI path template: `/v1/channels/{channel_id}`. */
  readonly path: string;
  readonly summary: string;
  readonly access: RouteAccess;
  readonly query: z.ZodType | null;
  readonly body: z.ZodType | null;
  /** The JSON answer's schema; `null` for a Server-Sent Events stream. */
  readonly response: z.ZodType | null;
  /** Success status (200 unless told). */
  readonly status: number;
  readonly handle: (input: RouteInput<unknown, unknown>) => Promise<unknown>;
}

/** A route whose handler gets its query and body parsed by their schemas (a failure is `invalid_request`). */
export function route<Q extends z.ZodType | null = null, B extends z.ZodType | null = null>(spec: {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly summary: string;
  readonly access: RouteAccess;
  readonly query?: Q;
  readonly body?: B;
  readonly response: z.ZodType | null;
  readonly status?: number;
  readonly handle: (input: RouteInput<Parsed<Q>, Parsed<B>>) => Promise<unknown>;
}): Route {
  const query = spec.query ?? null;
  const body = spec.body ?? null;
  return {
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    access: spec.access,
    query,
    body,
    response: spec.response,
    status: spec.status ?? 200,
    handle: (input) =>
      spec.handle({
        ...input,
        query: parseWith<Parsed<Q>>(query, input.query, 'invalid query'),
        body: parseWith<Parsed<B>>(body, input.body, 'invalid body'),
      }),
  };
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

function parseWith<T>(schema: z.ZodType | null, value: unknown, what: string): T {
  if (schema === null) return undefined as T;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidRequestError(formatIssues(what, parsed.error.issues));
  // The schema's output is T by construction of route(): Parsed<S> is z.output<S> for the same S.
  return parsed.data as T;
}

/** A request's path (percent-encoded as sent) and its query, decoded; the last of a repeated name wins. */
export interface RequestTarget {
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
}

/**
 * Reads a request line's target. Every percent-encoding in it, in the path and in the query, must decode to UTF-8:
 * anything else (`%`, `%Z`, `%ZZ`, a truncated sequence) is `invalid_request`, whatever route it names.
 */
export function requestTarget(raw: string): RequestTarget {
  let url: URL;
  try {
    url = new URL(raw, 'http://bridge');
  } catch (err) {
    throw new InvalidRequestError('the request target is not a URL', { cause: err });
  }
  decodeOrRefuse(url.pathname, 'the path');
  const query: [string, string][] = [];
  for (const pair of url.search.slice(1).split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    query.push([decodeOrRefuse(name, 'the query string', true), decodeOrRefuse(value, 'the query string', true)]);
  }
  // Built from entries: a name such as `__proto__` is an own property like any other.
  return { path: url.pathname, query: Object.fromEntries(query) };
}

function decodeOrRefuse(text: string, what: string, form = false): string {
  try {
    return decodeURIComponent(form ? text.replaceAll('+', ' ') : text);
  } catch (err) {
    // The input is not echoed: the message is the same for every malformed target.
    throw new InvalidRequestError(`${what} is not valid percent-encoding (UTF-8)`, { cause: err });
  }
}

/** The route of `method` and `path` with its path parameters decoded; `'method'` when only another method matches. */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | 'method' | null {
  let other = false;
  for (const route of routes) {
    const names: string[] = [];
    const pattern = route.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const m = new RegExp(`^${pattern}$`).exec(path);
    if (m === null) continue;
    if (route.method !== method) {
      other = true;
      continue;
    }
    const params: Record<string, string> = {};
    names.forEach((name, i) => (params[name] = decodeOrRefuse(m[i + 1] ?? '', 'the path')));
    return { route, params };
  }
  return other ? 'method' : null;
}

/** Whether the route answers with Server-Sent Events: the routes a browser's `EventSource` opens. */
export function isStreamRoute(route: Route): boolean {
  return route.response === null;
}

/**
 * The bearer token of a request: the `Authorization: Bearer` header, and on a stream route (a browser's
 * `EventSource` cannot set headers) `?access_token=` too. `null` without one.
 */
export function bearerTokenOf(
  route: Route,
  authorization: string | undefined,
  query: Readonly<Record<string, string>>,
): string | null {
  const header = authorization === undefined ? null : (/^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? null);
  if (header !== null || !isStreamRoute(route)) return header;
  return query['access_token'] ?? null;
}

/**
 * Refuses a token in the query string off the stream routes: there it lands in logs, proxies and browser histories,
 * and every client that is not an `EventSource` can send the header.
 */
export function refuseQueryToken(route: Route, query: Readonly<Record<string, string>>): void {
  if (isStreamRoute(route) || !Object.hasOwn(query, 'access_token')) return;
  throw new AuthError(
    'send the token in the Authorization: Bearer header: ?access_token= is taken by the event streams only',
  );
}
