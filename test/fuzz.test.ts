/**
 * Fuzzes every RPC operation of a real hub-service process: mutated valid requests and hostile roots, sent as a
 * registered agent. Every reply must be a typed error with a known code other than `internal`, or a result valid
 * for the operation's response schema; the hub must stay up and answer `health`; the WAL must hold only envelopes.
 *
 * `AG2NET_FUZZ_RUNS` sets the number of payloads (default 500, a few seconds); a longer run, e.g.
 * `AG2NET_FUZZ_RUNS=10000 npx vitest run test/fuzz.test.ts`, takes a few minutes. `AG2NET_FUZZ_SEED` replays a run.
 */
import { HubRpc } from '@ag2net/client';
import {
  EV_CHANNEL_INVITE,
  EnvelopeSchema,
  ErrorCode,
  HUB_OPS,
  RpcReplySchema,
  hubNames,
  newId,
  type HubNames,
} from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { ackInviteAs } from './support/invites.js';
import { fuzzCases, type FuzzCase, type FuzzIds } from './support/fuzz-payloads.js';
import { startHubService, type ServiceProcess } from './support/processes.js';

const stack = fileStack();
const RUNS = Number(process.env['AG2NET_FUZZ_RUNS'] ?? 500);
const SEED = process.env['AG2NET_FUZZ_SEED'];
// A fuzzed createChannel that passes validation waits for its invite to time out (2 s): the budget grows with runs.
const KNOWN_CODES: readonly string[] = Object.values(ErrorCode).filter((c) => c !== ErrorCode.Internal);

async function startServing(prefix: string, hubId: string): Promise<{ hub: ServiceProcess; rpc: HubRpc }> {
  // Invites unanswered for 2 s fail: fuzzed createChannel calls end quickly, the fixture's invite is acked in time.
  const extraArgs = ['--invite-ack-timeout-ms', '2000'];
  const hub = stack.track(startHubService({ natsUrl: stack.url, prefix, hubId, leaseTtlMs: 600_000, extraArgs }));
  const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 20_000 });
  await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === hubId, {
    timeoutMs: 30_000,
    what: `hub ${hubId} serving`,
  });
  return { hub, rpc };
}

async function fixture(rpc: HubRpc): Promise<FuzzIds> {
  const agent = async (name: string) => {
    const { passport } = await rpc.call('register', { passport: { name } });
    if (passport.agent_id === null) throw new Error(`no id for ${name}`);
    return passport.agent_id;
  };
  const a = await agent('fuzz-a');
  const b = await agent('fuzz-b');
  // The channel is active: `b` acks its invite, found in the channel's log, while `createChannel` waits for it.
  const channelId = newId();
  const created = rpc.call(
    'createChannel',
    { channel_id: channelId, type: 'conversation', participants: [b] },
    { caller: a },
  );
  const invite = await waitFor(
    async () => {
      const log = await rpc.call('readWal', { channel_id: channelId }, { caller: a }).catch(() => null);
      return log?.envelopes.find((e) => e.event_type === EV_CHANNEL_INVITE);
    },
    { timeoutMs: 10_000, what: 'the invite', intervalMs: 20 },
  );
  await ackInviteAs(rpc, invite, b);
  const { channel } = await created;
  const task = 'fuzz-task';
  await rpc.call(
    'observeTask',
    { task: { task_id: task, owner_id: a, created_at: '2026-01-01T00:00:00Z', state: 'running' } },
    { caller: a },
  );
  return { a, b, channel: channel.channel_id, task };
}

/** Sends one case and checks its reply; returns a description of what was wrong, or null. */
async function check(names: HubNames, ids: FuzzIds, c: FuzzCase, nobody: string): Promise<string | null> {
  // `unregister` as a fixture agent would leave the rest of the run answering not_found.
  const callerId = c.caller === 'nobody' || c.op === 'unregister' ? nobody : ids[c.caller];
  const subject = names.rpc(c.op, HUB_OPS[c.op].caller ? callerId : undefined);
  const msg = await stack.nc.request(subject, c.payload, { timeout: 15_000 });
  const reply = RpcReplySchema.safeParse(JSON.parse(msg.string()));
  if (!reply.success) return `reply is not an RpcReply: ${msg.string().slice(0, 300)}`;
  if (!reply.data.ok) {
    const { code, message } = reply.data.error;
    if (!KNOWN_CODES.includes(code)) return `${c.op} answered ${code}: ${message.slice(0, 300)}`;
    if (message.length > 1024) return `${c.op} answered a ${message.length}-character message`;
    return null;
  }
  const result = HUB_OPS[c.op].response.safeParse(reply.data.result);
  return result.success ? null : `${c.op} result does not match its schema: ${result.error.message.slice(0, 300)}`;
}

function sizeOf(payload: string | Uint8Array): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

async function walMessages(names: HubNames): Promise<string[]> {
  const jsm = await jetstreamManager(stack.nc);
  const info = await jsm.streams.info(names.walStream);
  if (info.state.messages === 0) return [];
  const consumer = await jetstream(stack.nc).consumers.get(names.walStream, { deliver_policy: DeliverPolicy.All });
  const out: string[] = [];
  const messages = await consumer.consume();
  for await (const m of messages) {
    out.push(m.string());
    if (m.info.pending === 0) break;
  }
  messages.stop();
  return out;
}

describe('RPC fuzz against hub-service', () => {
  it(
    `answers ${RUNS} hostile requests over every operation with typed errors or valid results`,
    async () => {
      const prefix = uniqueName('fuzz');
      const names = hubNames(prefix);
      const { hub, rpc } = await startServing(prefix, 'fuzzed');
      const ids = await fixture(rpc);
      const nobody = newId();
      const problems: string[] = [];
      const maxPayload = stack.nc.info?.max_payload ?? 1024 * 1024;
      const run = await fc.check(
        fc.asyncProperty(fuzzCases(ids), async (c) => {
          // What the server would refuse to carry never reaches the hub: not a case.
          fc.pre(sizeOf(c.payload) <= maxPayload - 1024);
          const problem = await check(names, ids, c, nobody);
          if (problem !== null) problems.push(problem);
          return problem === null;
        }),
        { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: Number(SEED) }), endOnFailure: true },
      );
      expect(problems).toEqual([]);
      // The counterexample can be megabytes: say what failed and how to replay it, not the payload.
      const failed = run.failed ? `seed ${run.seed}: ${String(run.errorInstance).slice(0, 500)}` : null;
      expect(failed).toBeNull();
      expect(hub.child.exitCode).toBeNull();
      expect((await rpc.call('health', {}, { timeout: 5000 })).hub_id).toBe('fuzzed');
      const wal = await walMessages(names);
      expect(wal.length).toBeGreaterThan(0);
      expect(wal.filter((text) => !EnvelopeSchema.safeParse(JSON.parse(text)).success)).toEqual([]);
    },
    60_000 + RUNS * 30,
  );

  it('answers the 250 KB register of DEL characters shortly, and the standby never takes over', async () => {
    const prefix = uniqueName('fuzz');
    const names = hubNames(prefix);
    const { hub, rpc } = await startServing(prefix, 'first');
    const standby = stack.track(startHubService({ natsUrl: stack.url, prefix, hubId: 'second', leaseTtlMs: 600_000 }));
    await waitFor(() => standby.output().includes('started; competing for the lease'), {
      timeoutMs: 30_000,
      what: 'the standby',
    });
    const payload = JSON.stringify({ passport: { name: 'mallory', kind: '\x7f'.repeat(250_000) } });
    const msg = await stack.nc.request(names.rpc('register'), payload, { timeout: 15_000 });
    const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
    expect(reply.ok).toBe(false);
    if (reply.ok) return;
    expect(reply.error.code).toBe('invalid_request');
    expect(reply.error.message.length).toBeLessThan(400);
    expect(reply.error.message.endsWith('… (250000 chars)')).toBe(true);
    expect((await rpc.call('health', {}, { timeout: 5000 })).hub_id).toBe('first');
    expect(hub.child.exitCode).toBeNull();
    expect(standby.child.exitCode).toBeNull();
    expect(standby.output()).not.toContain('serving');
  }, 90_000);
});
