/**
 * `ag2net hubs`: every hub of the prefix (active and standby) and the delivery lag, for the operator only; on a
 * secured deployment NATS refuses anyone but the operator's user (exit 4).
 */
import { HubClient } from '@ag2net/client';
import { startHub, type Hub } from '@ag2net/hub';
import { DeliveryLagSchema, HealthSchema } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSecuredStack } from '../../test/support/secured-stack.js';
import { run } from './support.js';

const nats = natsPerFile();
const prefix = uniqueName('cli');
const STANDBY = 'hub-b-standby';
let active: Hub;
let standby: Hub;

const at = (): string[] => ['--server', nats.url, '--prefix', prefix];
const Status = z.strictObject({
  partitions: z.number().nullable(),
  hubs: z.array(HealthSchema),
  holders: z.array(
    z.strictObject({
      partition: z.number(),
      held_by: z.array(z.strictObject({ hub_id: z.string(), epoch: z.number() })),
    }),
  ),
  unheld: z.array(z.number()),
  delivery: DeliveryLagSchema.nullable(),
});

beforeAll(async () => {
  active = await startHub({ servers: nats.url, prefix, hubId: 'hub-a-active', sweepIntervalMs: 0 });
  standby = await startHub({ servers: nats.url, prefix, hubId: STANDBY, awaitActive: false, sweepIntervalMs: 0 });
  await using operator = await HubClient.connect({ servers: nats.url, prefix, operator: true });
  await waitFor(async () => (await operator.hubs()).length === 2, { what: 'both hubs in the roster' });
});

afterAll(async () => {
  await standby?.close();
  await active?.close();
});

describe('ag2net hubs', () => {
  it('prints every hub with its role, and the delivery lag, as JSON', async () => {
    const r = await run([...at(), '--operator', 'hubs', '--json']);
    expect(r.code).toBe(0);
    const status = Status.parse(JSON.parse(r.out));
    expect(status.hubs.map((h) => [h.hub_id, h.role, h.epoch])).toEqual([
      ['hub-a-active', 'active', active.epoch],
      [STANDBY, 'standby', 0],
    ]);
    expect([status.partitions, status.holders, status.unheld]).toEqual([
      1,
      [{ partition: 0, held_by: [{ hub_id: 'hub-a-active', epoch: active.epoch }] }],
      [],
    ]);
    expect(status.delivery).toEqual({ pending: 0, ack_pending: 0, oldest_pending_age_seconds: null });
  });

  it('prints a table of the hubs and the lag', async () => {
    const r = await run([...at(), '--operator', 'hubs', '--wait', '500']);
    expect(r.code).toBe(0);
    const rows = r.out.split('\n').map((line) => line.trim().split(/\s+/));
    expect(rows.slice(0, 3).map((row) => row.slice(0, 3))).toEqual([
      ['HUB', 'ROLE', 'EPOCH'],
      ['hub-a-active', 'active', String(active.epoch)],
      [STANDBY, 'standby', '0'],
    ]);
    expect(rows.slice(4, 8)).toEqual([
      ['partitions', '1'],
      ['pending', '0'],
      ['ack', 'pending', '0'],
      ['oldest', 'pending', '-'],
    ]);
  });

  it('on a partitioned prefix shows which hub holds each partition', async () => {
    const parted = uniqueName('cli-parts');
    const hubs: Hub[] = [];
    for (const hubId of ['hub-1', 'hub-2']) {
      hubs.push(
        await startHub({
          servers: nats.url,
          prefix: parted,
          hubId,
          partitions: 4,
          awaitActive: false,
          sweepIntervalMs: 0,
        }),
      );
    }
    try {
      await using operator = await HubClient.connect({ servers: nats.url, prefix: parted, operator: true });
      const held = async (): Promise<number[]> =>
        (await operator.hubs()).flatMap((h) => h.held.map((p) => p.partition)).sort();
      await waitFor(async () => (await held()).join() === '0,1,2,3', { what: 'every partition held' });
      const r = await run(['--server', nats.url, '--prefix', parted, '--operator', 'hubs', '--wait', '500']);
      expect(r.code).toBe(0);
      const lines = r.out.split('\n');
      const holder = (k: number): string =>
        hubs.find((h) => h.health().held.some((p) => p.partition === k))?.hubId ?? '-';
      const epochOf = (k: number): string =>
        String(hubs.flatMap((h) => h.health().held).find((p) => p.partition === k)?.epoch ?? '-');
      const table = lines.slice(lines.indexOf('PARTITION  HUB    EPOCH'), lines.indexOf('PARTITION  HUB    EPOCH') + 5);
      expect(table.map((l) => l.trim().split(/\s+/))).toEqual([
        ['PARTITION', 'HUB', 'EPOCH'],
        ...[0, 1, 2, 3].map((k) => [String(k), holder(k), epochOf(k)]),
      ]);
      expect(lines).toContain('partitions      4');
    } finally {
      for (const h of hubs) await h.close();
    }
  });

  it('is for operators: without --operator it exits 4', async () => {
    const r = await run([...at(), 'hubs']);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toContain('hubs is for operators');
  });

  it('on a secured deployment NATS refuses anyone but the operator (exit 4)', async () => {
    await using stack = await startSecuredStack();
    const secured = ['--server', stack.url, '--prefix', stack.prefix, '--operator'];
    const refused = await run([...secured, '--creds', stack.paths.registrantCreds, 'hubs']);
    expect([refused.code, refused.out]).toEqual([4, '']);
    expect(refused.err).toContain('access_denied: only the operator may ask for the hub roster');
    const allowed = await run([...secured, '--creds', stack.paths.adminCreds, 'hubs', '--json']);
    expect(allowed.code).toBe(0);
    expect(Status.parse(JSON.parse(allowed.out)).hubs.map((h) => h.role)).toEqual(['active']);
  });
});
