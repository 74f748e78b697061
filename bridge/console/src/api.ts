import { type z } from 'zod';
import {
  ActivityReplySchema,
  AdapterStateReplySchema,
  AgentsPageSchema,
  AuditPageSchema,
  ChannelReplySchema,
  ChannelsPageSchema,
  ErrorBodySchema,
  HubHealthSchema,
  HubStatusSchema,
  MeSchema,
  PassportReplySchema,
  PostReplySchema,
  ResumeReplySchema,
  SessionSchema,
  SkillReplySchema,
  TasksPageSchema,
} from '../../src/api-schemas.js';

/**
 * A refused or failed request: the bridge's error code, message and details (the hub's, as it sent them), and the
 * HTTP status (0: no answer).
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(options: {
    code: string;
    message: string;
    status: number;
    details?: Readonly<Record<string, unknown>> | undefined;
  }) {
    super(options.message);
    this.name = 'ApiError';
    this.code = options.code;
    this.status = options.status;
    this.details = options.details;
  }
}

/** Told when a request answers 401: the token expired or the bridge no longer accepts it. */
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

type Query = Readonly<Record<string, string | number | undefined>>;

function withQuery(path: string, query: Query | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

async function request<S extends z.ZodType>(
  schema: S,
  init: { method?: string; path: string; token: string | null; query?: Query; body?: unknown },
): Promise<z.output<S>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.token !== null) headers['authorization'] = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(withQuery(init.path, init.query), {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  } catch (err) {
    throw new ApiError({ code: 'unavailable', message: `the bridge did not answer: ${String(err)}`, status: 0 });
  }
  let payload: unknown = null;
  try {
    payload = await res.json();
  } catch {
    payload = null;
  }
  if (!res.ok) {
    const body = ErrorBodySchema.safeParse(payload);
    const error = body.success
      ? new ApiError({ ...body.data.error, status: res.status })
      : new ApiError({ code: 'internal', message: `HTTP ${res.status}`, status: res.status });
    if (res.status === 401 && init.token !== null) onUnauthorized();
    throw error;
  }
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw new ApiError({ code: 'protocol_error', message: `unexpected reply from ${init.path}`, status: res.status });
  }
  return parsed.data;
}

const enc = encodeURIComponent;

/** The bridge's HTTP API as one signed-in person (or the operator) calls it. */
export class Api {
  constructor(readonly token: string | null) {}

  static signIn(name: string, apiKey: string) {
    return request(SessionSchema, {
      method: 'POST',
      path: '/v1/session',
      token: null,
      body: { name, api_key: apiKey },
    });
  }

  me() {
    return request(MeSchema, { path: '/v1/me', token: this.token });
  }
  agents(query?: Query) {
    return request(AgentsPageSchema, { path: '/v1/agents', token: this.token, query: { limit: 500, ...query } });
  }
  agent(nameOrId: string) {
    return request(PassportReplySchema, { path: `/v1/agents/${enc(nameOrId)}`, token: this.token });
  }
  resume(agentId: string) {
    return request(ResumeReplySchema, { path: `/v1/agents/${enc(agentId)}/resume`, token: this.token });
  }
  skill(agentId: string) {
    return request(SkillReplySchema, { path: `/v1/agents/${enc(agentId)}/skill`, token: this.token });
  }
  channels(query?: Query) {
    return request(ChannelsPageSchema, { path: '/v1/channels', token: this.token, query: { limit: 500, ...query } });
  }
  channel(id: string) {
    return request(ChannelReplySchema, { path: `/v1/channels/${enc(id)}`, token: this.token });
  }
  channelState(id: string) {
    return request(AdapterStateReplySchema, { path: `/v1/channels/${enc(id)}/state`, token: this.token });
  }
  activity() {
    return request(ActivityReplySchema, { path: '/v1/activity', token: this.token });
  }
  openChannel(body: {
    type: string;
    target: string[];
    intent?: string;
    ttl?: string;
    knobs?: Readonly<Record<string, unknown>>;
  }) {
    return request(ChannelReplySchema, { method: 'POST', path: '/v1/channels', token: this.token, body });
  }
  closeChannel(id: string) {
    return request(ChannelReplySchema, {
      method: 'POST',
      path: `/v1/channels/${enc(id)}/close`,
      token: this.token,
      body: {},
    });
  }
  post(channelId: string, body: Readonly<Record<string, unknown>>) {
    return request(PostReplySchema, {
      method: 'POST',
      path: `/v1/channels/${enc(channelId)}/envelopes`,
      token: this.token,
      body,
    });
  }
  tasks(query?: Query) {
    return request(TasksPageSchema, { path: '/v1/tasks', token: this.token, query: { limit: 500, ...query } });
  }
  audit(query?: Query) {
    return request(AuditPageSchema, { path: '/v1/audit', token: this.token, query: { limit: 500, ...query } });
  }
  hubHealth() {
    return request(HubHealthSchema, { path: '/v1/hub/health', token: this.token });
  }
  hubStatus() {
    return request(HubStatusSchema, { path: '/v1/hub/status', token: this.token });
  }

  /**
   * Why a stream that EventSource could not open was refused: EventSource hides the HTTP answer, so the same stream
   * is asked once more with fetch (the token in its header, as every fetch sends it) and its error body read. `null`
   * when the stream opens now (the request is then cancelled) or the bridge does not answer with an error body.
   */
  async streamRefusal(path: string, query?: Query): Promise<WireRefusal | null> {
    const abort = new AbortController();
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.token !== null) headers['authorization'] = `Bearer ${this.token}`;
    try {
      const res = await fetch(withQuery(path, query), { headers, signal: abort.signal });
      if (res.ok) return null;
      const body = ErrorBodySchema.safeParse(await res.json());
      return body.success ? body.data.error : null;
    } catch {
      return null;
    } finally {
      abort.abort();
    }
  }

  /**
   * A stream's URL for EventSource, with the token in the query: EventSource cannot set headers, and the bridge takes
   * `?access_token=` on its event streams only. Every other request sends the token in its `Authorization` header.
   */
  streamUrl(path: string, query?: Query): string {
    return withQuery(path, { ...query, access_token: this.token ?? undefined });
  }
}

/** An error body's error: code, message and the hub's details. */
export interface WireRefusal {
  readonly code: string;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

/** "code: message" of any failure, as the error alert shows it. */
export function describeError(err: unknown): { code: string; message: string } {
  if (err instanceof ApiError) return { code: err.code, message: err.message };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}
