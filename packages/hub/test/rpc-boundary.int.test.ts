import {
  EV_TEXT,
  HUB_OPS,
  MAX_ENVELOPE_BYTES,
  RpcReplySchema,
  hubNames,
  type HubOp,
  type HubResponse,
  type RpcReply,
} from '@ag2net/protocol';
import { silentLogger } from '@ag2net/hub';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { RpcServer, type HubHandlers } from '../src/rpc/rpc-server.js';
import {
  asOperator,
  auditCount,
  failure,
  openChannel,
  openNet,
  register,
  say,
  waitForState,
  type TestNet,
} from './support.js';

const nats = natsPerFile();
// A server whose max_payload (64 KiB) is smaller than a page of `listAgents` (512 KiB): replies can outgrow it.
const small = natsPerFile({ extraConfig: 'max_payload: 65536' });

/** Sends `payload` as is on `op`'s subject and returns the parsed reply. */
async function raw(net: TestNet, op: HubOp, payload: string | Uint8Array, caller?: string): Promise<RpcReply> {
  const msg = await net.nc.request(net.names.rpc(op, caller), payload, { timeout: 10_000 });
  return RpcReplySchema.parse(JSON.parse(msg.string()));
}

async function healthy(net: TestNet): Promise<void> {
  expect((await net.rpc.call('health', {})).role).toBe('active');
}

describe('the RPC boundary', () => {
  it('answers a 250 KB register whose passport.kind is 250,000 DEL characters with a short invalid_request', async () => {
    await using net = await openNet(nats.url);
    const payload = JSON.stringify({ passport: { name: 'mallory', kind: '\x7f'.repeat(250_000) } });
    expect(payload.length).toBeGreaterThan(250_000);
    const quoted = `'${'\\x7f'.repeat(50)}`.slice(0, 200);
    expect(await raw(net, 'register', payload)).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message:
          "invalid register request: passport.kind: Passport.kind must be one of ('agent', 'human', 'remote_agent') " +
          `or null; got ${quoted}… (250000 chars)`,
      },
    });
    await healthy(net);
  });

  it('refuses a request over its op limit before parsing, with the limit and size in details', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const envelope = {
      channel_id: 'c1',
      sender_id: alice.id,
      event_type: EV_TEXT,
      event_data: { text: 'x'.repeat(MAX_ENVELOPE_BYTES) },
    };
    const payload = JSON.stringify(envelope);
    const size = Buffer.byteLength(payload);
    expect(await raw(net, 'post', payload, alice.id)).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: `post request of ${size} bytes exceeds the limit of ${MAX_ENVELOPE_BYTES} bytes`,
        details: { limit: MAX_ENVELOPE_BYTES, size },
      },
    });
    const health = JSON.stringify({ padding: 'x'.repeat(HUB_OPS.health.maxRequestBytes) });
    expect(await raw(net, 'health', health)).toMatchObject({
      ok: false,
      error: { code: 'invalid_request', details: { limit: 65_536, size: Buffer.byteLength(health) } },
    });
    await healthy(net);
  });

  it('refuses nesting deeper than 64 levels before zod sees it', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const deep = `{"type":"conversation","participants":[],"knobs":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
    expect(await raw(net, 'createChannel', deep, alice.id)).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: 'createChannel request nests deeper than 64 levels',
        details: { limit: 64 },
      },
    });
    await healthy(net);
  });

  it('refuses a ttl beyond 365 days instead of failing on an invalid date', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const request = JSON.stringify({ type: 'conversation', participants: [bob.id], ttl: '9999999999d' });
    expect(await raw(net, 'createChannel', request, alice.id)).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message:
          "invalid createChannel request: ttl: invalid duration '9999999999d': at most 31536000 seconds (365 days)",
      },
    });
    await healthy(net);
  });

  it('refuses a task id that is no KV key, and an unknown channel type with a short message', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const observation = JSON.stringify({ capability: 'x', outcome: 'completed', task_id: 'a.*.>' });
    const reply = await raw(net, 'recordObservation', observation, alice.id);
    expect(reply).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: 'invalid recordObservation request: task_id: id may hold only letters, digits, "_" and "-"',
      },
    });
    const bob = await register(net, 'bob');
    const type = 'y'.repeat(100);
    const refused = await failure(
      net.rpc.call('createChannel', { type, participants: [bob.id] }, { caller: alice.id }),
    );
    expect(refused).toEqual({ code: 'not_found', message: `no adapter registered for '${type}'@v1` });
    const long = JSON.stringify({ type: 'y'.repeat(100_000), participants: [bob.id] });
    expect(await raw(net, 'createChannel', long, alice.id)).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: 'invalid createChannel request: type: Too big: expected string to have <=128 characters',
      },
    });
    await healthy(net);
  });

  it('answers raw bytes that are not JSON, and prototype keys, with invalid_request', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    expect(await raw(net, 'setSkill', new Uint8Array([0xff, 0xfe, 0x00, 0x7b]), alice.id)).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'setSkill request is not valid JSON' },
    });
    expect(await raw(net, 'getAgent', '{"__proto__":{"x":1},"name_or_id":"alice"}')).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'invalid getAgent request: (root): Unrecognized key: "__proto__"' },
    });
    await healthy(net);
  });
});

describe('on a server whose max_payload is 64 KiB', () => {
  it('pages listAgents to fit the connection', async () => {
    await using net = await openNet(small.url);
    const owner = 'o'.repeat(4000);
    for (let i = 0; i < 20; i++) await register(net, `agent-${i}`, { passport: { owner } });
    const first = await net.rpc.call('listAgents', { limit: 1000 });
    expect(first.agents.length).toBeLessThan(20);
    expect(first.next_cursor).toBe(String(first.agents.length));
    const seen = [...first.agents];
    let cursor = first.next_cursor;
    while (cursor !== null) {
      const page: HubResponse<'listAgents'> = await net.rpc.call('listAgents', { limit: 1000, cursor });
      seen.push(...page.agents);
      cursor = page.next_cursor;
    }
    expect(seen.map((p) => p.name).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `agent-${i}`).sort());
  });

  it('replaces a reply over max_payload by a short typed error, and keeps serving', async () => {
    await using net = await openNet(small.url);
    const names = hubNames(uniqueName('big'));
    const nc = await connect({ servers: small.url });
    const server = new RpcServer(nc, names, { logger: silentLogger, importAccount: null });
    const huge = { hub_id: 'x'.repeat(100_000) };
    server.start(
      new Proxy({} as HubHandlers, { get: () => () => huge }),
      { isRegistered: () => false, channel: () => undefined, task: () => undefined },
      { credentialsOf: () => undefined },
    );
    // The server knows the subscriptions once the serving connection's flush returns.
    await nc.flush();
    try {
      const msg = await net.nc.request(names.rpc('health'), '{}', { timeout: 10_000 });
      const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
      expect(reply).toEqual({
        ok: false,
        error: {
          code: 'internal',
          message: `health reply of ${JSON.stringify({ ok: true, result: huge }).length} bytes exceeds the connection's max_payload of 65536 bytes`,
          details: { limit: 65_536, size: JSON.stringify({ ok: true, result: huge }).length },
        },
      });
    } finally {
      await server.stop();
      await nc.close();
    }
  });
});

describe('paging', () => {
  it('pages listAgents with a cursor until next_cursor is null', async () => {
    await using net = await openNet(nats.url);
    const names = ['a1', 'a2', 'a3', 'a4', 'a5'];
    for (const name of names) await register(net, name);
    const first = await net.rpc.call('listAgents', { limit: 2, sort_by: 'name' });
    expect(first.agents.map((p) => p.name)).toEqual(['a1', 'a2']);
    expect(first.next_cursor).toBe('2');
    const second = await net.rpc.call('listAgents', { limit: 2, sort_by: 'name', cursor: first.next_cursor });
    expect(second.agents.map((p) => p.name)).toEqual(['a3', 'a4']);
    const third = await net.rpc.call('listAgents', { limit: 2, sort_by: 'name', cursor: second.next_cursor });
    expect(third).toMatchObject({ next_cursor: null });
    expect(third.agents.map((p) => p.name)).toEqual(['a5']);
    expect(await failure(net.rpc.call('listAgents', { cursor: 'nope' }))).toEqual({
      code: 'invalid_request',
      message: 'cursor is not one this hub handed out',
    });
  });

  it('pages listChannels and listTasks, and readWal continues at next_since', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const one = await openChannel(net, alice, 'conversation', [bob]);
    const two = await openChannel(net, alice, 'conversation', [bob]);
    const channels = await net.rpc.call('listChannels', { agent_id: alice.id, limit: 1 }, asOperator);
    expect(channels.channels.map((c) => c.channel_id)).toEqual([one.channel_id]);
    const rest = await net.rpc.call(
      'listChannels',
      { agent_id: alice.id, limit: 1, cursor: channels.next_cursor },
      asOperator,
    );
    expect(rest).toMatchObject({ next_cursor: null });
    expect(rest.channels.map((c) => c.channel_id)).toEqual([two.channel_id]);

    for (const task_id of ['t1', 't2']) {
      await net.rpc.call(
        'observeTask',
        { task: { task_id, owner_id: alice.id, created_at: '2026-01-01T00:00:00Z' } },
        { caller: alice.id },
      );
    }
    const tasks = await net.rpc.call('listTasks', { limit: 1 }, { caller: alice.id });
    expect(tasks.tasks.map((t) => t.task_id)).toEqual(['t1']);
    expect(tasks.next_cursor).toBe('1');

    await waitForState(net, one.channel_id, 'active');
    await say(net, alice, one.channel_id, 'hello');
    await say(net, alice, one.channel_id, 'again');
    const log = await net.rpc.call('readWal', { channel_id: one.channel_id }, { caller: alice.id });
    const page = await net.rpc.call('readWal', { channel_id: one.channel_id, limit: 1 }, { caller: alice.id });
    expect(page.envelopes.map((e) => e.sequence)).toEqual([1]);
    expect(page.next_since).toBe(2);
    const next = await net.rpc.call('readWal', { channel_id: one.channel_id, since: 2 }, { caller: alice.id });
    expect(next.next_since).toBeNull();
    expect([...page.envelopes, ...next.envelopes]).toEqual(log.envelopes);
  });

  it('pages readAudit by stream sequence; the pages add up to the whole trail', async () => {
    await using net = await openNet(nats.url);
    for (const name of ['a1', 'a2', 'a3']) await register(net, name);
    const all = await auditCount(net, { kinds: ['agent_registered'] }, 3);
    const seen: HubResponse<'readAudit'>['records'] = [];
    let cursor: string | null = null;
    do {
      const page: HubResponse<'readAudit'> = await net.rpc.call(
        'readAudit',
        {
          kinds: ['agent_registered'],
          limit: 1,
          cursor,
        },
        asOperator,
      );
      expect(page.records.length).toBeLessThanOrEqual(1);
      seen.push(...page.records);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(all);
  });

  it('answers a readAudit cursor past the last matching record with an empty last page', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    await net.rpc.call(
      'observeTask',
      { task: { task_id: 't1', owner_id: alice.id, created_at: '2026-01-01T00:00:00Z' } },
      { caller: alice.id },
    );
    await net.rpc.call('fireTaskEvent', { task_id: 't1', kind: 'mirror_failed' }, { caller: alice.id });
    const records = await auditCount(net, {}, 2);
    const registered = records.filter((r) => r.kind === 'agent_registered');
    expect(registered).toHaveLength(1);
    // Stream sequence 2 onwards holds no agent_registered record: a consumer from there would wait forever.
    expect(await net.rpc.call('readAudit', { kinds: ['agent_registered'], cursor: '2' }, asOperator)).toEqual({
      records: [],
      next_cursor: null,
    });
  });
});
