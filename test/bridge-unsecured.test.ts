import { startBridge } from '@ag2net/bridge';
import { HubClient } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';

const nats = natsPerFile();

describe('bridge on an unsecured hub', () => {
  it('signs a person in with their key and acts as their identity over the shared connection', async () => {
    const prefix = uniqueName('br');
    const nc = await connect({ servers: nats.url });
    const hub = await startHub({ connection: nc, prefix, awaitActive: true });
    const sdk = await HubClient.connect({ servers: nats.url, prefix });
    try {
      const helper = await sdk.register({ name: 'helper' });
      await using bridge = await startBridge({ servers: nats.url, prefix, apiKeys: { zoe: 'k-zoe' }, port: 0 });
      const refused = await call(bridge.url, '/v1/session', { body: { name: 'zoe', api_key: 'k-x' } });
      expect(refused.status).toBe(401);
      const session = await call(bridge.url, '/v1/session', { body: { name: 'zoe', api_key: 'k-zoe' } });
      const { token } = z.object({ token: z.string() }).parse(session.body);
      const me = z.object({ agent_id: z.string() }).parse((await call(bridge.url, '/v1/me', { token })).body);
      expect((await sdk.getAgent('zoe')).agent_id).toBe(me.agent_id);
      const opened = await call(bridge.url, '/v1/channels', {
        token,
        body: { type: 'conversation', target: 'helper' },
      });
      expect(opened.status).toBe(201);
      const channel = z
        .object({ channel: z.object({ channel_id: z.string(), creator_id: z.string() }) })
        .parse(opened.body).channel;
      expect(channel.creator_id).toBe(me.agent_id);
      const posted = await call(bridge.url, `/v1/channels/${channel.channel_id}/envelopes`, {
        token,
        body: { text: 'hi' },
      });
      expect(posted.status).toBe(201);
      const log = await helper.readWal(channel.channel_id);
      expect(log.at(-1)).toMatchObject({ sender_id: me.agent_id, event_data: { text: 'hi' } });
      // No operator key configured: nobody signs in as the operator.
      const op = await call(bridge.url, '/v1/session', { body: { name: '$operator', api_key: 'anything' } });
      expect(op.status).toBe(401);
    } finally {
      await sdk.close();
      await hub.close();
      await nc.close();
    }
  });
});
