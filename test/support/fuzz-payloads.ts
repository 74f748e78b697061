/**
 * Payload generators of the RPC fuzz test: a valid request per operation (the seeds), mutations of them that put
 * hostile values at any path, and hostile roots (deep nesting, huge strings, unicode, prototype keys, raw bytes).
 */
import { HUB_OP_NAMES, type HubOp, type HubRequest } from '@ag2net/protocol';
import fc from 'fast-check';

/** The ids the seeds refer to: two registered agents, a channel between them, a task of the first. */
export interface FuzzIds {
  readonly a: string;
  readonly b: string;
  readonly channel: string;
  readonly task: string;
}

/** One request per operation that a hub could accept as it is. */
export function seeds(ids: FuzzIds): { readonly [Op in HubOp]: HubRequest<Op> } {
  const { a, b, channel, task } = ids;
  return {
    register: { passport: { name: 'fuzz-new', kind: 'agent' }, resume: { summary: 's' }, skill_md: null, rule: null },
    attach: { name_or_id: 'fuzz-a', public_key: `U${'A'.repeat(55)}`, auth: { scheme: 'none' } },
    renewCredentials: {},
    acquireTurnLock: { channel_id: channel, holder: 'replica-1', ttl_ms: 6000 },
    renewTurnLock: { channel_id: channel, holder: 'replica-1' },
    releaseTurnLock: { channel_id: channel, holder: 'replica-1' },
    unregister: {},
    revokeIdentity: { name_or_id: 'fuzz-b' },
    readmitIdentity: { name_or_id: 'fuzz-b' },
    deliveryLag: {},
    getAgent: { name_or_id: a },
    getResume: { agent_id: a },
    getSkill: { agent_id: a },
    getRule: { agent_id: a },
    findAgentId: { name: 'fuzz-a' },
    listAgents: { capability: null, query: 's', kind: 'agent', sort_by: 'name', limit: 10, cursor: null },
    setResume: { resume: { summary: 'fuzzing', claimed_capabilities: ['x'] } },
    setSkill: { skill_md: '# skill' },
    setRule: { rule: {} },
    recordObservation: { capability: 'x', outcome: 'completed', latency_ms: 5, task_id: task },
    createChannel: {
      type: 'conversation',
      participants: [b],
      ttl: '1h',
      knobs: {},
      intent: 'fuzz',
      labels: { k: 'v' },
    },
    getChannel: { channel_id: channel },
    listChannels: { agent_id: a, state: 'active', limit: 5, cursor: null },
    closeChannel: { channel_id: channel, reason: 'fuzz' },
    post: {
      channel_id: channel,
      sender_id: a,
      audience: null,
      event_type: 'ag2.text',
      event_data: { text: 'hi' },
      causation_id: null,
      ttl_seconds: 60,
    },
    readWal: { channel_id: channel, since: 1, until: null, limit: 10 },
    findEnvelopeByCausation: { channel_id: channel, sender_id: a, causation_id: 'c' },
    canSend: { channel_id: channel, event_type: 'ag2.text' },
    pendingTurnsFor: {},
    adapterState: { channel_id: channel },
    health: {},
    observeTask: {
      task: { task_id: task, owner_id: a, spec: { title: 't' }, state: 'running', created_at: '2026-01-01T00:00:00Z' },
    },
    updateTask: { task_id: task, state: 'running', progress: { p: 1 }, error: null },
    getTask: { task_id: task },
    listTasks: { agent_id: a, channel_id: null, state: null, limit: 5, cursor: null },
    checkpointTask: { task_id: task, state: { step: 1 } },
    readTaskCheckpoint: { task_id: task },
    fireTaskEvent: { task_id: task, kind: 'mirror_failed', payload: { why: 'x' } },
    reportTurnFailure: { channel_id: channel, envelope_id: 'e1', exc_type: 'Error', exc_message: 'm' },
    readAudit: { kinds: ['agent_registered'], channel_id: null, agent_id: a, limit: 5, cursor: null },
  };
}

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** An object whose own keys are `keys` (a computed `__proto__` key is an own property, as `JSON.parse` makes it). */
function objectWith(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true });
  return out;
}

/** Arrays or objects nested `depth` levels. */
function nested(depth: number, asObject: boolean): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = asObject ? { a: value } : [value];
  return value;
}

/** A value no request should hold. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(fc.integer({ min: 60, max: 1500 }), fc.boolean()).map(([d, o]) => nested(d, o)),
  fc
    .tuple(
      fc.constantFrom('\x7f', 'é', '😀', 'a', '\u0000', '.', '*', '>', '\ud800'),
      fc.constantFrom(300, 70_000, 250_000),
    )
    .map(([ch, n]) => ch.repeat(n)),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: 'grapheme', maxLength: 64 }),
  fc.constantFrom<unknown>(
    '',
    ' ',
    'a.b',
    'a b',
    '*',
    '>',
    '9999999999d',
    '1e400',
    1e308,
    -1,
    0,
    2 ** 53,
    -(2 ** 53),
    0.5,
    true,
    null,
    [],
    {},
    '2026-13-45T99:99:99Z',
  ),
  fc
    .array(fc.constantFrom(...PROTO_KEYS), { minLength: 1, maxLength: 3 })
    .map((keys) => objectWith(keys.map((k) => [k, { polluted: true }]))),
  fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 2000, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => `x${i}`)),
);

/** Every path to a value inside `value` (keys and indexes) down to 8 levels, the root excluded. */
function pathsOf(value: unknown, prefix: readonly (string | number)[] = [], out: (string | number)[][] = []) {
  if (prefix.length >= 8) return out;
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([...prefix, i]);
      pathsOf(v, [...prefix, i], out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      pathsOf(v, [...prefix, k], out);
    }
  }
  return out;
}

type Mutation = {
  readonly kind: 'set' | 'delete' | 'add';
  readonly pick: number;
  readonly key: string;
  readonly value: unknown;
};

/** `seed` with one mutation applied (a deep copy; the seed is left alone). */
function mutate(seed: unknown, m: Mutation): unknown {
  const root: unknown = structuredClone(seed);
  const paths = pathsOf(root);
  const path = paths.length === 0 ? [] : (paths[m.pick % paths.length] ?? []);
  const parentPath = path.slice(0, -1);
  let parent: unknown = root;
  for (const step of parentPath) parent = (parent as Record<string | number, unknown>)[step];
  if (typeof parent !== 'object' || parent === null) return m.value;
  const holder = parent as Record<string | number, unknown>;
  const last = path.at(-1);
  // JSON drops named keys of arrays: adding to an array appends.
  if (Array.isArray(holder) && (m.kind === 'add' || last === undefined)) holder.push(m.value);
  else if (m.kind === 'add' || last === undefined) {
    Object.defineProperty(holder, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
  } else if (m.kind === 'delete') {
    if (Array.isArray(holder) && typeof last === 'number') holder.splice(last, 1);
    else delete holder[last];
  } else holder[last] = m.value;
  return root;
}

/** What the fuzz test sends: an operation and the bytes of its request. */
export interface FuzzCase {
  readonly op: HubOp;
  readonly payload: string | Uint8Array;
  /** The caller id put in the subject: one of the agents, or an id nobody registered. */
  readonly caller: 'a' | 'b' | 'nobody';
}

/** Cases for every operation: mutated seeds (mostly), hostile roots and raw bytes. */
export function fuzzCases(ids: FuzzIds): fc.Arbitrary<FuzzCase> {
  const requests = seeds(ids);
  const op = fc.constantFrom(...HUB_OP_NAMES);
  const caller = fc.constantFrom<FuzzCase['caller']>('a', 'a', 'b', 'nobody');
  const mutation = fc.record({
    kind: fc.constantFrom<Mutation['kind']>('set', 'set', 'delete', 'add'),
    pick: fc.nat(),
    key: fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 8 })),
    value: hostileValue,
  });
  const mutated = fc
    .record({ op, caller, mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }) })
    .map(({ op: o, caller: c, mutations }) => ({
      op: o,
      caller: c,
      payload: JSON.stringify(mutations.reduce<unknown>((v, m) => mutate(v, m), requests[o])),
    }));
  const valid = fc.record({ op, caller }).map(({ op: o, caller: c }) => ({
    op: o,
    caller: c,
    payload: JSON.stringify(requests[o]),
  }));
  const hostileRoot = fc.record({ op, caller, value: hostileValue }).map(({ op: o, caller: c, value }) => ({
    op: o,
    caller: c,
    payload: JSON.stringify(value) ?? 'null',
  }));
  const rawBytes = fc
    .record({ op, caller, bytes: fc.uint8Array({ maxLength: 2048 }) })
    .map(({ op: o, caller: c, bytes }) => ({
      op: o,
      caller: c,
      payload: bytes,
    }));
  const deepText = fc
    .record({ op, caller, depth: fc.integer({ min: 65, max: 200_000 }) })
    .map(({ op: o, caller: c, depth }) => ({
      op: o,
      caller: c,
      payload: `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    }));
  return fc.oneof(
    { arbitrary: mutated, weight: 8 },
    { arbitrary: valid, weight: 2 },
    { arbitrary: hostileRoot, weight: 2 },
    { arbitrary: rawBytes, weight: 1 },
    { arbitrary: deepText, weight: 1 },
  );
}
