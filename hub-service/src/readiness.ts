import type { Hub } from '@ag2net/hub';
import type { ConnectionWatch, Readiness } from '@ag2net/telemetry';

/** What the hub service's readiness depends on. */
export interface HubServiceState {
  /** The hub once `startHub` returned (provisioned and campaigning). */
  readonly hub: Hub | undefined;
  /** The NATS connection, once connected. */
  readonly connection: ConnectionWatch | undefined;
  /** True from the first stop signal on. */
  readonly stopping: boolean;
}

/**
 * Ready when connected to NATS and either the active hub or a standby that is provisioned and campaigning, so it
 * takes over when the lease lapses. Not ready while starting, while the NATS connection is down, and from the
 * moment the service is told to stop.
 */
export function hubReadiness(state: HubServiceState): Readiness {
  if (state.stopping) return { ready: false, reason: 'stopping' };
  if (state.connection === undefined) return { ready: false, reason: 'connecting to NATS' };
  if (!state.connection.connected()) return { ready: false, reason: 'NATS connection down; reconnecting' };
  if (state.hub === undefined) return { ready: false, reason: 'provisioning streams and buckets' };
  if (state.hub.role === 'active') return { ready: true, reason: `active (epoch ${state.hub.epoch})` };
  return { ready: true, reason: 'standby, campaigning for the lease' };
}
