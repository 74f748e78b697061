import type { Hub } from '@ag2net/hub';
import type { Health } from '@ag2net/protocol';
import type { ConnectionWatch, Readiness } from '@ag2net/telemetry';
import { holdingsOf, partitionRanges } from './holdings.js';

/** What the hub service's readiness depends on. */
export interface HubServiceState {
  /** The hub once `startHub` returned (provisioned and campaigning). */
  readonly hub: (Pick<Hub, 'role' | 'epoch'> & { health(): Pick<Health, 'partitions' | 'held'> }) | undefined;
  /** The NATS connection, once connected. */
  readonly connection: ConnectionWatch | undefined;
  /** True from the first stop signal on. */
  readonly stopping: boolean;
}

/**
 * Ready when connected to NATS and either serving or a standby that is provisioned and campaigning, so that it takes
 * over when the lease lapses. With several partitions the same holds per hub: one that serves some partitions is
 * active; one that serves none, because the other hubs own them all, is a standby, ready to take over the partitions of
 * a hub that leaves. Not ready while starting, while the NATS connection is down, and from the moment the service is
 * told to stop.
 */
export function hubReadiness(state: HubServiceState): Readiness {
  if (state.stopping) return { ready: false, reason: 'stopping' };
  if (state.connection === undefined) return { ready: false, reason: 'connecting to NATS' };
  if (!state.connection.connected()) return { ready: false, reason: 'NATS connection down; reconnecting' };
  const { hub } = state;
  if (hub === undefined) return { ready: false, reason: 'provisioning streams and buckets' };
  const held = holdingsOf(hub.health());
  if (held.of === 1) {
    if (hub.role === 'active') return { ready: true, reason: `active (epoch ${hub.epoch})` };
    return { ready: true, reason: 'standby, campaigning for the lease' };
  }
  if (held.partitions.length > 0) {
    return { ready: true, reason: `active, serving partitions ${partitionRanges(held.partitions)} of ${held.of}` };
  }
  return {
    ready: true,
    reason: `standby, serving none of the ${held.of} partitions; takes over those of a hub that leaves`,
  };
}
