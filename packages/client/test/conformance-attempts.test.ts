import { readFileSync } from 'node:fs';
import { HUB_OP_NAMES, type HubOp } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_POST_RPC_TIMEOUT_MS, DEFAULT_RPC_TIMEOUT_MS, HubRpc, defaultAttemptTimeoutMs } from '../src/rpc.js';

const AttemptsFixture = z.strictObject({
  post_ms: z.number().int().positive(),
  other_ms: z.number().int().positive(),
  ops: z.record(z.string(), z.number().int().positive()),
});

const fixture = AttemptsFixture.parse(
  JSON.parse(readFileSync(new URL('../../../conformance/fixtures/rpc-attempts.json', import.meta.url), 'utf8')),
);

/** A connection that records the timeout of each request and answers it `{ ok: true, result: {} }`. */
function recording(): { nc: NatsConnection; timeouts: number[] } {
  const timeouts: number[] = [];
  const fake = {
    request(_subject: string, _payload: string, options: { timeout: number }): Promise<{ string(): string }> {
      timeouts.push(options.timeout);
      return Promise.resolve({ string: () => JSON.stringify({ ok: true, result: {} }) });
    },
  };
  // Only `request` is used by HubRpc.call; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, timeouts };
}

describe('the default time of one attempt (rpc-attempts.json)', () => {
  it('is the fixture’s for every operation, and the fixture names every operation', () => {
    expect(fixture.post_ms).toBe(DEFAULT_POST_RPC_TIMEOUT_MS);
    expect(fixture.other_ms).toBe(DEFAULT_RPC_TIMEOUT_MS);
    expect(Object.keys(fixture.ops).sort()).toEqual([...HUB_OP_NAMES].sort());
    const mine = Object.fromEntries(HUB_OP_NAMES.map((op) => [op, defaultAttemptTimeoutMs(op)]));
    expect(mine).toEqual(fixture.ops);
  });

  it('is what a call waits unless the client or the call sets its own', async () => {
    const health: HubOp = 'health';
    const plain = recording();
    await new HubRpc(plain.nc).call(health, {}).catch(() => undefined);
    await new HubRpc(plain.nc).call(health, {}, { timeout: 1_234 }).catch(() => undefined);
    expect(plain.timeouts).toEqual([fixture.ops[health], 1_234]);

    const configured = recording();
    await new HubRpc(configured.nc, { requestTimeoutMs: 777 }).call(health, {}).catch(() => undefined);
    expect(configured.timeouts).toEqual([777]);
  });
});
