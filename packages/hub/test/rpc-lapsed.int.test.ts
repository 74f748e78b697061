import { RpcReplySchema, hubNames, type RpcReply } from '@ag2net/protocol';
import { silentLogger } from '@ag2net/hub';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAPSED_REFUSAL_GRACE_MS, RpcServer, type HubHandlers } from '../src/rpc/rpc-server.js';

const nats = natsPerFile();

/** An RPC server on `names` whose every handler answers `{ hub_id }`, serving while `serving()` says so. */
async function serverAs(hubId: string, names: ReturnType<typeof hubNames>, serving: () => boolean) {
  const nc = await connect({ servers: nats.url });
  const server = new RpcServer(nc, names, { logger: silentLogger, importAccount: null, serving });
  server.start(
    new Proxy({} as HubHandlers, { get: () => () => ({ hub_id: hubId }) }),
    { isRegistered: () => false, channel: () => undefined, task: () => undefined },
    { credentialsOf: () => undefined },
  );
  // The server knows the subscriptions once the serving connection's flush returns.
  await nc.flush();
  return {
    async [Symbol.asyncDispose]() {
      await server.stop();
      await nc.close();
    },
  };
}

describe('a hub whose lease lapsed', () => {
  let client: NatsConnection;

  beforeAll(async () => {
    client = await connect({ servers: nats.url });
  });

  afterAll(async () => {
    await client.close();
  });

  async function health(names: ReturnType<typeof hubNames>): Promise<RpcReply> {
    const msg = await client.request(names.rpc('health'), '{}', { timeout: 5_000 });
    return RpcReplySchema.parse(JSON.parse(msg.string()));
  }

  it('lets its successor answer first: the requester gets the successor’s result, never the refusal', async () => {
    const names = hubNames(uniqueName('lapse'));
    await using _deposed = await serverAs('deposed', names, () => false);
    await using _successor = await serverAs('successor', names, () => true);
    for (let i = 0; i < 20; i += 1) {
      expect(await health(names)).toEqual({ ok: true, result: { hub_id: 'successor' } });
    }
  });

  it('refuses with unavailable after the grace when nobody else serves', async () => {
    const names = hubNames(uniqueName('alone'));
    await using _alone = await serverAs('alone', names, () => false);
    const reply = await health(names);
    expect(reply).toEqual({
      ok: false,
      error: { code: 'unavailable', message: 'this hub no longer holds the writer lease; retry' },
    });
  });

  it('answers a flood of 2,000 requests while lapsed, each once with unavailable, none dropped', async () => {
    const names = hubNames(uniqueName('flood'));
    await using _alone = await serverAs('alone', names, () => false);
    // More than may wait out the grace at once: the rest are refused at once, none is left unanswered.
    const replies = await Promise.all(Array.from({ length: 2_000 }, () => health(names)));
    const codes = new Map<string, number>();
    for (const reply of replies) {
      const code = reply.ok ? 'ok' : reply.error.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect([...codes]).toEqual([['unavailable', 2_000]]);
  });

  it('serves a request whose grace ends with the lease renewed', async () => {
    const names = hubNames(uniqueName('renew'));
    let holds = false;
    await using _hub = await serverAs('renewed', names, () => holds);
    const pending = health(names);
    setTimeout(() => {
      holds = true;
    }, LAPSED_REFUSAL_GRACE_MS / 5);
    expect(await pending).toEqual({ ok: true, result: { hub_id: 'renewed' } });
  });
});
