import { EV_TEXT } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { drained, openChannel, openNet, register, say } from './support.js';

const nats = natsPerFile();

describe('delivery', () => {
  it('fans out many channels at once, and each inbox gets each channel’s envelopes once and in log order', async () => {
    await using net = await openNet(nats.url);
    const hub = await register(net, 'hub-agent');
    const peers = await Promise.all(Array.from({ length: 8 }, (_, i) => register(net, `peer${i}`)));
    const channels = await Promise.all(peers.map((p) => openChannel(net, hub, 'conversation', [p])));
    const perChannel = 40;
    // Every channel posts at once, so the hub has many channels' envelopes to fan out concurrently.
    await Promise.all(
      channels.map(async (c) => {
        for (let n = 0; n < perChannel; n += 1) await say(net, hub, c.channel_id, `m${n}`);
      }),
    );
    await drained(net);
    for (const [i, peer] of peers.entries()) {
      const channelId = channels[i]?.channel_id;
      await peer.mailbox.waitFor(
        (e) => e.channel_id === channelId && e.event_data['text'] === `m${perChannel - 1}`,
        'the last text',
      );
      const got = peer.mailbox.envelopes.filter((e) => e.channel_id === channelId && e.event_type === EV_TEXT);
      expect(got.map((e) => e.event_data['text'])).toEqual(Array.from({ length: perChannel }, (_, n) => `m${n}`));
      const sequences = got.map((e) => e.sequence ?? 0);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    }
  });
});
