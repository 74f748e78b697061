/**
 * A channel whose history the hub's retention removed: `wal`, `channels show` and `tail --channel` say so in one line
 * and exit 3; `channels ls` lists it as `history expired`.
 */
import { HubClient, type HumanClient } from '@ag2net/client';
import { createManualClock, startHub, type Hub } from '@ag2net/hub';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echo, helloConversation } from './conversation.js';
import { run } from './support.js';

const nats = natsPerFile();
const prefix = uniqueName('cli_expired');
const HOUR = 3_600_000;
const EXPIRED_AT = '2026-01-01T01:00:00.000Z';
const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
let hub: Hub;
let client: HubClient;
let alice: HumanClient;
let expired: string;
let kept: string;

const at = (): string[] => ['--server', nats.url, '--prefix', prefix];
/** What every command that needs the expired channel's history says, on standard error. */
const line = (): string =>
  `ag2net: history of channel ${expired} expired at ${EXPIRED_AT} (kept 1h after it ended); ` +
  'it can no longer be read or exported\n';

beforeAll(async () => {
  hub = await startHub({ servers: nats.url, prefix, clock, sweepIntervalMs: 0, retainClosedMs: HOUR });
  client = await HubClient.connect({ servers: nats.url, prefix });
  await client.register({ name: 'bob' }, { handler: echo });
  alice = await client.registerHuman({ name: 'alice' });
  expired = await helloConversation(alice);
  await client.rpc.call('closeChannel', { channel_id: expired }, { caller: alice.agentId });
  kept = await helloConversation(alice);
  clock.advance(HOUR);
  await hub.tick();
});

afterAll(async () => {
  await client?.close({ graceMs: 0 });
  await hub?.close();
});

describe('a channel whose history expired', () => {
  it('wal says so in one line and exits 3, to the operator and to a participant alike', async () => {
    for (const as of [['--operator'], ['--as', 'alice']]) {
      const r = await run([...at(), ...as, 'wal', expired]);
      expect([r.code, r.out, r.err]).toEqual([3, '', line()]);
    }
    const json = await run([...at(), '--as', 'alice', '--json', 'wal', expired]);
    expect([json.code, json.out]).toEqual([3, '']);
    expect(JSON.parse(json.err)).toEqual({ error: { exit_code: 3, message: line().slice(8, -1), hint: null } });
    // The other channel's log is read as ever.
    const other = await run([...at(), '--as', 'alice', 'wal', kept]);
    expect([other.code, other.err]).toEqual([0, '']);
    expect(other.out).toContain('echo: hello');
  });

  it('channels show prints the metadata with when the history expired, then the line, and exits 3', async () => {
    const r = await run([...at(), '--as', 'alice', 'channels', 'show', expired.slice(0, 20)]);
    expect([r.code, r.err]).toEqual([3, line()]);
    expect(r.out).toContain(`id            ${expired}\n`);
    expect(r.out).toContain('closed        2026-01-01T00:00:00.000Z (explicit_close)\n');
    expect(r.out).toContain(`history       expired at ${EXPIRED_AT}\n`);
    expect(r.out).not.toContain('adapter state');
    const json = await run([...at(), '--as', 'alice', '--json', 'channels', 'show', expired]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.out)).toMatchObject({
      channel: { channel_id: expired, state: 'closed', expired_at: EXPIRED_AT },
      state: null,
    });
  });

  it('channels ls lists it as history expired, its reason and end as they were', async () => {
    const r = await run([...at(), '--as', 'alice', 'channels', 'ls']);
    expect([r.code, r.err]).toEqual([0, '']);
    const rows = r.out.split('\n').filter((l) => l.startsWith(expired) || l.startsWith(kept));
    // Every column but the times (shown in the machine's time zone).
    const cells = rows.map((row) => row.split(/\s{2,}/)).map((c) => [...c.slice(0, 4), c[6]]);
    expect(cells).toEqual([
      [expired, 'conversation', 'history expired', 'alice, bob', 'explicit_close'],
      [kept, 'conversation', 'active', 'alice, bob', '-'],
    ]);
    const json = await run([...at(), '--as', 'alice', '--json', 'channels', 'ls']);
    const listed = JSON.parse(json.out) as { channel_id: string; expired_at?: string }[];
    expect(listed.map((c) => [c.channel_id, c.expired_at])).toEqual([
      [expired, EXPIRED_AT],
      [kept, undefined],
    ]);
  });

  it('tail --channel says so in one line and exits 3 instead of following nothing', async () => {
    const r = await run([...at(), '--operator', 'tail', '--channel', expired]);
    expect([r.code, r.out, r.err]).toEqual([3, '', line()]);
  });
});
