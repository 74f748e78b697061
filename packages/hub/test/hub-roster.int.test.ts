import { HubClient } from '@ag2net/client';
import { startHub, type Logger } from '@ag2net/hub';
import { HUBS_PING_MAX_REQUEST_BYTES } from '@ag2net/protocol/internal';
import { MAX_REQUEST_DEPTH, RpcReplySchema, hubNames, newId } from '@ag2net/protocol';
import { jetstreamManager } from '@nats-io/jetstream';
import { natsPerFile, waitFor } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { deliveryLag } from '../src/operations/delivery-lag.js';
import { openNet } from './support.js';

const nats = natsPerFile();

/** A logger that keeps every warning, so that a test can see what the client dropped. */
function warningsLogger(): Logger & { readonly warnings: string[] } {
  const warnings: string[] = [];
  const none = (): void => undefined;
  const logger = {
    warnings,
    debug: none,
    info: none,
    warn: (_: object, msg?: string) => void warnings.push(msg ?? ''),
    error: none,
    child: () => logger,
  };
  return logger;
}

describe('the hub roster', () => {
  it('every hub answers, active and standby, and the client lists the active one first', async () => {
    await using net = await openNet(nats.url);
    const standby = await startHub({ servers: nats.url, prefix: net.prefix, hubId: 'a-standby', awaitActive: false });
    try {
      await using operator = await HubClient.connect({ servers: nats.url, prefix: net.prefix, operator: true });
      // The standby's subscription reaches the server a moment after startHub returns.
      await waitFor(async () => (await operator.hubs()).length === 2, { what: 'both hubs in the roster' });
      const hubs = await operator.hubs({ timeout: 500 });
      expect(hubs.map((h) => [h.hub_id, h.role, h.epoch])).toEqual([
        [net.hub.hubId, 'active', net.hub.epoch],
        ['a-standby', 'standby', 0],
      ]);
      expect(hubs[0]).toEqual({ ...net.hub.health(), uptime_seconds: hubs[0]?.uptime_seconds });
    } finally {
      await standby.close();
    }
  });

  it('answers a malformed request with invalid_request and keeps answering', async () => {
    await using net = await openNet(nats.url);
    const ask = async (payload: string | Uint8Array) => {
      const reply = RpcReplySchema.parse((await net.nc.request(net.names.hubsPing, payload, { timeout: 2000 })).json());
      return reply.ok ? 'ok' : reply.error.code;
    };
    expect(await ask('')).toBe('ok');
    expect(await ask('{}')).toBe('ok');
    expect(await ask('{"x":1}')).toBe('invalid_request');
    expect(await ask('not json')).toBe('invalid_request');
    expect(await ask('[]')).toBe('invalid_request');
    expect(await ask('['.repeat(MAX_REQUEST_DEPTH + 1) + ']'.repeat(MAX_REQUEST_DEPTH + 1))).toBe('invalid_request');
    expect(await ask(new Uint8Array(HUBS_PING_MAX_REQUEST_BYTES + 1))).toBe('invalid_request');
    // A request without a reply subject gets nothing and breaks nothing.
    net.nc.publish(net.names.hubsPing, '{"x":1}');
    expect(await ask('{}')).toBe('ok');
    expect(net.hub.role).toBe('active');
  });

  it('drops a reply that is not a Health with a warning, and lists no hub when none answers', async () => {
    await using net = await openNet(nats.url);
    const logger = warningsLogger();
    await using operator = await HubClient.connect({ servers: nats.url, prefix: net.prefix, operator: true, logger });
    const impostor = net.nc.subscribe(net.names.hubsPing, {
      callback: (_, msg) => void msg.respond('{"ok":true}'),
    });
    await net.nc.flush();
    expect((await operator.hubs()).map((h) => h.hub_id)).toEqual([net.hub.hubId]);
    expect(logger.warnings).toEqual(['roster reply dropped']);
    impostor.unsubscribe();
    await net.hub.close();
    expect(await operator.hubs({ timeout: 300 })).toEqual([]);
  });
});

describe('the delivery lag', () => {
  it('is zero at rest, and counts an envelope the WAL holds while no hub delivers', async () => {
    await using net = await openNet(nats.url);
    await using operator = await HubClient.connect({ servers: nats.url, prefix: net.prefix, operator: true });
    expect(await operator.deliveryLag()).toEqual({ pending: 0, ack_pending: 0, oldest_pending_age_seconds: null });
    await net.hub.close();
    // A WAL message no hub has fanned out yet (any hub will skip it as foreign once it delivers again), measured as
    // the next active hub measures it.
    const published = Date.now();
    await net.js.publish(net.names.wal(newId()), '{}');
    const jsm = await jetstreamManager(net.nc);
    const lag = await deliveryLag({ jsm, names: net.names });
    const age = lag?.oldest_pending_age_seconds ?? null;
    expect(lag).toEqual({ pending: 1, ack_pending: 0, oldest_pending_age_seconds: age });
    // The age of that very message: no older than the time since it was published (plus clock rounding).
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThanOrEqual((Date.now() - published) / 1000 + 1);
  });

  it('is null on a prefix no hub ever provisioned', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    expect(await deliveryLag({ jsm, names: hubNames('nohub' + newId().slice(-6)) })).toBeNull();
  });
});
