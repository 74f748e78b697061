import { startBridge, startBridgeOps, type BridgeOps } from '@ag2net/bridge';
import { HubClient } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, openSse } from './support/bridge-http.js';
import { startService } from './support/processes.js';
import { httpGet, parsePromText, sampleValue } from './support/prom-text.js';

const nats = natsPerFile();
const log = pino({ level: 'silent' });

async function scrape(ops: BridgeOps): Promise<ReturnType<typeof parsePromText>> {
  const res = await httpGet(`http://127.0.0.1:${String(ops.port)}/metrics`);
  expect(res.status).toBe(200);
  return parsePromText(res.body);
}

async function readiness(ops: BridgeOps): Promise<{ status: number; body: unknown }> {
  const res = await httpGet(`http://127.0.0.1:${String(ops.port)}/readyz`);
  return { status: res.status, body: JSON.parse(res.body) as unknown };
}

describe('bridge operations endpoints', () => {
  it('counts requests by route and status, signed-in people, open streams and rate-limited requests; ready while connected', async () => {
    const prefix = uniqueName('bops');
    const nc = await connect({ servers: nats.url });
    const hub = await startHub({ connection: nc, prefix, awaitActive: true });
    const sdk = await HubClient.connect({ servers: nats.url, prefix });
    const ops = await startBridgeOps({ port: 0, log, host: '127.0.0.1' });
    try {
      await sdk.register({ name: 'helper' });
      expect((await httpGet(`http://127.0.0.1:${String(ops.port)}/healthz`)).status).toBe(200);
      expect(await readiness(ops)).toEqual({ status: 503, body: { ready: false, reason: 'connecting to NATS' } });
      await using bridge = await startBridge({
        servers: nats.url,
        prefix,
        apiKeys: { zoe: 'k-zoe' },
        port: 0,
        rateBurst: 4,
        ratePerMinute: 1,
        observer: ops.observer,
      });
      ops.serving(bridge);
      expect(await readiness(ops)).toEqual({
        status: 200,
        body: { ready: true, reason: 'serving; 0 person(s) signed in' },
      });

      let samples = await scrape(ops);
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', { route: '/v1/session' })).toBe(0);
      expect(sampleValue(samples, 'ag2net_bridge_signed_in_people')).toBe(0);
      expect(sampleValue(samples, 'ag2net_bridge_open_streams')).toBe(0);

      const session = await call(bridge.url, '/v1/session', { body: { name: 'zoe', api_key: 'k-zoe' } });
      const { token } = z.object({ token: z.string() }).parse(session.body);
      expect((await call(bridge.url, '/nowhere')).status).toBe(404);
      samples = await scrape(ops);
      const session200 = { route: '/v1/session', status: '200' };
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', session200)).toBe(1);
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
      expect(sampleValue(samples, 'ag2net_bridge_http_request_duration_seconds_count', { route: '/v1/session' })).toBe(
        1,
      );
      expect(sampleValue(samples, 'ag2net_bridge_signed_in_people')).toBe(1);

      const opened = await call(bridge.url, '/v1/channels', {
        token,
        body: { type: 'conversation', target: 'helper' },
      });
      expect(opened.status).toBe(201);
      const channelId = z.object({ channel: z.object({ channel_id: z.string() }) }).parse(opened.body)
        .channel.channel_id;
      const streamRoute = '/v1/channels/{channel_id}/stream';
      const stream = await openSse(`${bridge.url}/v1/channels/${channelId}/stream`, {
        authorization: `Bearer ${token}`,
      });
      expect(stream.status).toBe(200);
      samples = await scrape(ops);
      expect(sampleValue(samples, 'ag2net_bridge_open_streams')).toBe(1);
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', { route: streamRoute })).toBe(0);
      stream.close();
      samples = await waitFor(
        async () => {
          const now = await scrape(ops);
          return sampleValue(now, 'ag2net_bridge_open_streams') === 0 ? now : undefined;
        },
        { timeoutMs: 10_000, what: 'the stream to end' },
      );
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', { route: streamRoute, status: '200' })).toBe(1);

      // The token's bucket held 4: the channel and the stream took 2, two more pass, the fifth is refused.
      expect(sampleValue(samples, 'ag2net_bridge_rate_limited_total')).toBe(0);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(bridge.url, '/v1/me', { token })).status);
      expect(statuses).toEqual([200, 200, 429]);
      samples = await scrape(ops);
      expect(sampleValue(samples, 'ag2net_bridge_rate_limited_total')).toBe(1);
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', { route: '/v1/me', status: '429' })).toBe(1);
      expect(sampleValue(samples, 'ag2net_bridge_http_requests_total', { route: '/v1/me', status: '200' })).toBe(2);

      ops.stopping();
      expect(await readiness(ops)).toEqual({ status: 503, body: { ready: false, reason: 'stopping' } });
    } finally {
      await ops.close();
      await sdk.close();
      await hub.close();
      await nc.close();
    }
  });

  it('the ag2net-bridge process serves them on AG2NET_BRIDGE_OPS_PORT, ready once connected, and stops with code 0', async () => {
    const prefix = uniqueName('bopsp');
    const nc = await connect({ servers: nats.url });
    const hub = await startHub({ connection: nc, prefix, awaitActive: true });
    const bridge = startService(
      'bridge-ops',
      'bridge/src/main.ts',
      ['--server', nats.url, '--prefix', prefix, '--port', '0'],
      { AG2NET_BRIDGE_OPS_PORT: '0' },
    );
    try {
      const port = await waitFor(
        () => {
          const line = bridge
            .output()
            .split('\n')
            .find((l) => l.includes('"msg":"serving /healthz, /readyz and /metrics"'));
          const logged: unknown = line === undefined ? undefined : (JSON.parse(line) as { port?: unknown }).port;
          return typeof logged === 'number' ? logged : undefined;
        },
        { timeoutMs: 20_000, what: 'the ops port in the log' },
      );
      const base = `http://127.0.0.1:${String(port)}`;
      const ready = await waitFor(
        async () => {
          const res = await httpGet(`${base}/readyz`);
          return res.status === 200 ? res : undefined;
        },
        { timeoutMs: 20_000, what: 'the bridge to be ready' },
      );
      expect(JSON.parse(ready.body)).toEqual({ ready: true, reason: 'serving; 0 person(s) signed in' });
      const samples = parsePromText((await httpGet(`${base}/metrics`)).body);
      expect(samples.some((s) => s.name === 'ag2net_bridge_open_streams')).toBe(true);
      expect(sampleValue(samples, 'ag2net_bridge_signed_in_people')).toBe(0);
    } finally {
      expect(await bridge.stop()).toBe(0);
      await hub.close();
      await nc.close();
    }
  });
});
