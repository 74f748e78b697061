import { hubNames } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { HubRpc } from './rpc.js';

/** A connection that records the subjects requested and answers every request with an empty pending-turns list. */
function recordingConnection(): { nc: NatsConnection; subjects: string[] } {
  const subjects: string[] = [];
  const fake = {
    request(subject: string): Promise<{ string(): string }> {
      subjects.push(subject);
      return Promise.resolve({ string: () => JSON.stringify({ ok: true, result: { turns: [] } }) });
    },
  };
  // Only `request` is used by HubRpc.call; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, subjects };
}

describe('HubRpc.call options', () => {
  it('sends to the caller-scoped subject named by options.caller', async () => {
    const { nc, subjects } = recordingConnection();
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    const reply = await rpc.call('pendingTurnsFor', {}, { caller: 'agent-7', timeout: 1000 });
    expect(reply).toEqual({ turns: [] });
    expect(subjects).toEqual([hubNames('k2').rpc('pendingTurnsFor', 'agent-7')]);
  });

  it('refuses an operation that needs a caller when options carry none', async () => {
    const { nc, subjects } = recordingConnection();
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    await expect(rpc.call('pendingTurnsFor', {}, { timeout: 1000 })).rejects.toThrow(
      new TypeError("pendingTurnsFor needs the caller's agent id"),
    );
    expect(subjects).toEqual([]);
  });
});
