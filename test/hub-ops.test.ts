import { HubClient, HubRpc } from '@ag2net/client';
import { EV_TEXT, NetworkError } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { startHubService, type ServiceProcess } from './support/processes.js';
import { httpGet, parsePromText, sampleValue } from './support/prom-text.js';

const stack = fileStack();

/** The port the service logged it serves `/healthz`, `/readyz` and `/metrics` on. */
async function opsPort(service: ServiceProcess): Promise<number> {
  return waitFor(
    () => {
      for (const line of service.output().split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry: unknown = JSON.parse(line);
        if (typeof entry !== 'object' || entry === null || !('msg' in entry) || !('port' in entry)) continue;
        if (entry.msg === 'serving /healthz, /readyz and /metrics' && typeof entry.port === 'number') return entry.port;
      }
      return undefined;
    },
    { timeoutMs: 20_000, what: 'the ops port in the log' },
  );
}

describe('hub-service operations endpoints', () => {
  it('exposes metrics that move as envelopes are admitted and refused, and /readyz follows the NATS connection', async () => {
    const prefix = uniqueName('ops');
    const service = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'ops-hub', extraArgs: ['--http-port', '0'] }),
    );
    const base = `http://127.0.0.1:${await opsPort(service)}`;
    expect(await httpGet(`${base}/healthz`)).toEqual({ status: 200, body: '{"status":"alive"}' });
    const ready = await waitFor(
      async () => {
        const r = await httpGet(`${base}/readyz`);
        const body = JSON.parse(r.body) as { ready: boolean; reason: string };
        // A standby that campaigns is ready too; this one becomes the active hub, the only one on its prefix.
        return r.status === 200 && body.reason.startsWith('active') ? body : undefined;
      },
      { timeoutMs: 20_000, what: 'the hub active' },
    );
    expect(ready).toEqual({ ready: true, reason: expect.stringMatching(/^active \(epoch \d+\)$/) as unknown });
    const epoch = Number(/epoch (\d+)/.exec(ready.reason)?.[1]);

    const hub = await HubClient.connect({ servers: stack.url, prefix });
    try {
      const bob = await hub.registerHuman({ name: 'bob' });
      const alice = await hub.registerHuman({ name: 'alice' });
      const channel = await alice.open({ type: 'conversation', target: 'bob' });
      const scrape = async () => parsePromText((await httpGet(`${base}/metrics`)).body);
      const before = await scrape();

      for (const n of [1, 2, 3]) await channel.send(`hello ${n}`);
      // Alice posting as bob is refused by the hub: counted under its wire code.
      const rpc = new HubRpc(stack.nc, { prefix });
      const refusal = await rpc
        .call(
          'post',
          { channel_id: channel.channelId, sender_id: bob.agentId, event_type: EV_TEXT, event_data: { text: 'x' } },
          { caller: alice.agentId },
        )
        .then(
          () => null,
          (err: unknown) => (err instanceof NetworkError ? err.code : 'thrown'),
        );
      expect(refusal).not.toBeNull();
      const code = refusal ?? '';

      const lagCount = (s: ReturnType<typeof parsePromText>) => sampleValue(s, 'ag2net_hub_delivery_lag_seconds_count');
      const after = await waitFor(
        async () => {
          const s = await scrape();
          return lagCount(s) - lagCount(before) >= 3 ? s : undefined;
        },
        { timeoutMs: 10_000, what: 'the three deliveries counted' },
      );
      const delta = (name: string, labels: Record<string, string>) =>
        sampleValue(after, name, labels) - sampleValue(before, name, labels);
      expect(delta('ag2net_hub_admitted_total', { op: 'post' })).toBe(3);
      expect(delta('ag2net_hub_rejected_total', { op: 'post', code })).toBe(1);
      expect(delta('ag2net_hub_request_duration_seconds_count', { op: 'post' })).toBe(4);
      expect(sampleValue(after, 'ag2net_hub_channels', { type: 'conversation', state: 'active' })).toBe(1);
      expect(sampleValue(after, 'ag2net_hub_active')).toBe(1);
      expect(sampleValue(after, 'ag2net_hub_lease_epoch')).toBe(epoch);
      // One partition, which this hub holds.
      expect(sampleValue(after, 'ag2net_hub_partitions_held')).toBe(1);
      expect(sampleValue(after, 'ag2net_hub_partitions')).toBe(1);
      expect(sampleValue(after, 'ag2net_hub_registered_agents')).toBe(2);
      expect(sampleValue(after, 'ag2net_hub_dead_letters_total')).toBe(0);
      expect(sampleValue(after, 'ag2net_hub_quarantined_total')).toBe(0);
      expect(after.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    } finally {
      await hub.close();
    }

    // NATS down: not ready; back: ready again.
    const restarting = stack.nats.restart(5_000);
    const down = await waitFor(
      async () => {
        const r = await httpGet(`${base}/readyz`);
        return r.status === 503 ? r.body : undefined;
      },
      { timeoutMs: 5_000, what: '/readyz 503 while NATS is down' },
    );
    expect(JSON.parse(down)).toEqual({ ready: false, reason: 'NATS connection down; reconnecting' });
    await restarting;
    await waitFor(async () => (await httpGet(`${base}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      what: '/readyz 200 after NATS came back',
    });
    expect((await httpGet(`${base}/nothing`)).status).toBe(404);
  }, 60_000);
});
