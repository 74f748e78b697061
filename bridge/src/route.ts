import type { HumanClient } from '@ag2net/client';
import { InvalidRequestError, formatIssues, type HubOp, type HubRequest, type HubResponse } from '@ag2net/protocol';
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
  call<Op extends HubOp>(op: Op, request: HubRequest<Op>): Promise<HubResponse<Op>>;
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
