/**
 * `ag2net export`: a channel's whole log as JSON lines, equal to what `readWal` gives the operator, before the hub's
 * history retention removes it; afterwards the command says the history expired (exit 3).
 */
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HubClient, type HumanClient } from '@ag2net/client';
import { createManualClock, startHub, type Hub } from '@ag2net/hub';
import { EnvelopeSchema, OPERATOR_CALLER, type Envelope, type HubResponse } from '@ag2net/protocol';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echo, helloConversation } from './conversation.js';
import { jsonLines, run } from './support.js';

const nats = natsPerFile();
const prefix = uniqueName('cli_export');
const HOUR = 3_600_000;
const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
let hub: Hub;
let client: HubClient;
let alice: HumanClient;
let channelId: string;
let dir: string;

const at = (): string[] => ['--server', nats.url, '--prefix', prefix];

/** The operator's whole log of the channel through `readWal`, every page. */
async function operatorLog(): Promise<Envelope[]> {
  const out: Envelope[] = [];
  let since: number | null = 1;
  while (since !== null) {
    const page: HubResponse<'readWal'> = await client.rpc.call(
      'readWal',
      { channel_id: channelId, since, limit: 3 },
      { caller: OPERATOR_CALLER },
    );
    out.push(...page.envelopes);
    since = page.next_since;
  }
  return out;
}

beforeAll(async () => {
  hub = await startHub({ servers: nats.url, prefix, clock, sweepIntervalMs: 0, retainClosedMs: HOUR });
  client = await HubClient.connect({ servers: nats.url, prefix });
  await client.register({ name: 'bob' }, { handler: echo });
  alice = await client.registerHuman({ name: 'alice' });
  channelId = await helloConversation(alice);
  await client.rpc.call('closeChannel', { channel_id: channelId }, { caller: alice.agentId });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-export-'));
});

afterAll(async () => {
  await client?.close({ graceMs: 0 });
  await hub?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('ag2net export', () => {
  it('writes the whole log as JSON lines, oldest first, equal to what readWal gives the operator', async () => {
    const log = await operatorLog();
    expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => i + 1));
    const r = await run([...at(), '--operator', 'export', channelId]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(jsonLines(r.out).map((line) => EnvelopeSchema.parse(line))).toEqual(log);
    expect(r.out.split('\n').filter((l) => l !== '')).toHaveLength(log.length);
  });

  it('writes the lines to --out with mode 0600 and prints a summary', async () => {
    const file = join(dir, 'log.jsonl');
    const r = await run([...at(), '--operator', 'export', channelId, '--out', file]);
    const log = await operatorLog();
    expect([r.code, r.out]).toEqual([0, `exported ${log.length} envelopes of channel ${channelId} to ${file}\n`]);
    expect(jsonLines(await readFile(file, 'utf8')).map((line) => EnvelopeSchema.parse(line))).toEqual(log);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const json = await run([...at(), '--operator', '--json', 'export', channelId, '--out', file]);
    expect(JSON.parse(json.out)).toEqual({ channel_id: channelId, envelopes: log.length, file });
  });

  it('is for operators (exit 4)', async () => {
    const r = await run([...at(), '--as', 'alice', 'export', channelId]);
    expect(r.code).toBe(4);
    expect(r.err).toContain('export is for operators');
  });

  it('after the retention says the history expired (exit 3) and leaves no file', async () => {
    clock.advance(HOUR);
    await hub.tick();
    const file = join(dir, 'late.jsonl');
    const r = await run([...at(), '--operator', 'export', channelId, '--out', file]);
    expect(r.code).toBe(3);
    expect(r.err).toContain(`the history of channel ${channelId} expired at 2026-01-01T01:00:00.000Z`);
    expect((await readdir(dir)).sort()).toEqual(['log.jsonl']);
  });
});
