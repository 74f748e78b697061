import { describe, expect, it } from 'vitest';
import { hubReadiness, type HubServiceState } from './readiness.js';

const up = { connected: () => true };

/** A hub of `partitions` partitions that holds `held`, each at epoch 3. */
function hub(partitions: number, held: readonly number[]): NonNullable<HubServiceState['hub']> {
  return {
    role: held.length > 0 ? 'active' : 'standby',
    epoch: held.length > 0 ? 3 : 0,
    health: () => ({ partitions, held: held.map((partition) => ({ partition, epoch: 3 })) }),
  };
}

describe('hubReadiness', () => {
  it('is not ready while connecting, provisioning, reconnecting or stopping', () => {
    expect(hubReadiness({ hub: undefined, connection: undefined, stopping: false })).toEqual({
      ready: false,
      reason: 'connecting to NATS',
    });
    expect(hubReadiness({ hub: undefined, connection: up, stopping: false })).toEqual({
      ready: false,
      reason: 'provisioning streams and buckets',
    });
    expect(hubReadiness({ hub: hub(8, [0]), connection: { connected: () => false }, stopping: false })).toEqual({
      ready: false,
      reason: 'NATS connection down; reconnecting',
    });
    expect(hubReadiness({ hub: hub(8, [0]), connection: up, stopping: true })).toEqual({
      ready: false,
      reason: 'stopping',
    });
  });

  it('with one partition is ready as the active hub and as a standby campaigning for the lease', () => {
    expect(hubReadiness({ hub: hub(1, [0]), connection: up, stopping: false })).toEqual({
      ready: true,
      reason: 'active (epoch 3)',
    });
    expect(hubReadiness({ hub: hub(1, []), connection: up, stopping: false })).toEqual({
      ready: true,
      reason: 'standby, campaigning for the lease',
    });
  });

  it('with several partitions says which it serves, and is ready serving none while the other hubs own them all', () => {
    expect(hubReadiness({ hub: hub(8, [0, 1, 2, 5]), connection: up, stopping: false })).toEqual({
      ready: true,
      reason: 'active, serving partitions 0-2, 5 of 8',
    });
    expect(hubReadiness({ hub: hub(8, []), connection: up, stopping: false })).toEqual({
      ready: true,
      reason: 'standby, serving none of the 8 partitions; takes over those of a hub that leaves',
    });
  });
});
