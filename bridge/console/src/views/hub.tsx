import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import type { Health } from '@ag2net/protocol';
import type { HubStatus } from '../../../src/api-schemas.js';
import { Badge, Loading, usePoll, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { shortDuration } from '../logic/time.js';

/**
 * The hub: the answering hub's health and the lease for everyone; for the operator also every hub (the active one
 * and the standbys) and the delivery lag, when the bridge serves `/v1/hub/status`.
 */
export function HubView() {
  const { api, session, reportError } = useConsole();
  const [health, setHealth] = useState<{ health: Health; lease: { holder: string; epoch: number } | null } | null>(
    null,
  );
  const [status, setStatus] = useState<HubStatus | null>(null);

  usePoll(
    async () => {
      try {
        setHealth(await api.hubHealth());
      } catch (err) {
        reportError(err);
      }
      if (!session.operator) return;
      try {
        setStatus(await api.hubStatus());
      } catch (err) {
        // A bridge without the status route (404) or a caller without the right (403): nothing more to show.
        if (err instanceof ApiError && (err.status === 403 || err.status === 404)) setStatus(null);
        else reportError(err);
      }
    },
    5000,
    [api, session.operator],
  );

  if (health === null) return <Loading />;
  const h = health.health;
  const lease = status?.lease ?? health.lease;
  return (
    <section>
      <ViewHeader title="Hub" />
      <div class="grid-2">
        <div class="card" data-testid="hub-health">
          <h2>
            Answering hub <Badge value={h.role} tone={h.role === 'active' ? 'ok' : 'off'} />
          </h2>
          <dl class="fields">
            <dt>Hub id</dt>
            <dd class="mono">{h.hub_id}</dd>
            <dt>Epoch</dt>
            <dd>{h.epoch}</dd>
            <dt>Up for</dt>
            <dd>{shortDuration(h.uptime_seconds)}</dd>
            <dt>Open channels</dt>
            <dd>{h.active_channels}</dd>
            <dt>Registered agents</dt>
            <dd>{h.registered_agents}</dd>
            <dt>Adapters</dt>
            <dd>{h.adapters_loaded}</dd>
            <dt>Quarantined</dt>
            <dd class={h.quarantined > 0 ? 'text-bad' : ''}>{h.quarantined}</dd>
            <dt>Dead letters</dt>
            <dd class={h.dead_letters > 0 ? 'text-bad' : ''}>{h.dead_letters}</dd>
          </dl>
        </div>
        <div class="card">
          <h2>Lease</h2>
          {lease === null ? (
            <p class="muted">A standby answered: it does not hold the lease.</p>
          ) : (
            <dl class="fields">
              <dt>Active hub</dt>
              <dd class="mono">{lease.holder}</dd>
              <dt>Epoch</dt>
              <dd>{lease.epoch}</dd>
            </dl>
          )}
          <h2 class="spaced">Delivery</h2>
          {status?.delivery === undefined || status.delivery === null ? (
            <p class="muted" data-testid="delivery-lag">
              {session.operator
                ? 'Delivery lag is not reported by this bridge.'
                : 'Delivery lag is shown to operators.'}
            </p>
          ) : (
            <>
              <dl class="fields" data-testid="delivery-lag">
                <dt>Pending</dt>
                <dd>{status.delivery.pending}</dd>
                <dt>Awaiting ack</dt>
                <dd>{status.delivery.ack_pending}</dd>
                <dt>Oldest pending</dt>
                <dd>
                  {status.delivery.oldest_pending_age_seconds === null
                    ? 'none'
                    : shortDuration(status.delivery.oldest_pending_age_seconds)}
                </dd>
              </dl>
            </>
          )}
        </div>
      </div>
      {
        <div class="card">
          <h2>Hubs</h2>
          <div class="table-scroll">
            <table class="table">
              <thead>
                <tr>
                  <th>Hub id</th>
                  <th>Role</th>
                  <th>Epoch</th>
                  <th>Up for</th>
                  <th>Open channels</th>
                  <th>Quarantined</th>
                  <th>Dead letters</th>
                </tr>
              </thead>
              <tbody>
                {(status?.hubs ?? [h]).map((hub) => (
                  <tr key={hub.hub_id} data-testid="hub-row" data-role={hub.role} data-hub-id={hub.hub_id}>
                    <td class="mono">{hub.hub_id}</td>
                    <td>
                      <Badge value={hub.role} tone={hub.role === 'active' ? 'ok' : 'off'} />
                    </td>
                    <td>{hub.epoch}</td>
                    <td>{shortDuration(hub.uptime_seconds)}</td>
                    <td>{hub.active_channels}</td>
                    <td>{hub.quarantined}</td>
                    <td>{hub.dead_letters}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {status === null ? (
            <p class="muted">
              {session.operator
                ? 'Only the hub that answered is shown: this bridge does not report the others.'
                : 'Only the hub that answered is shown; operators see every hub.'}
            </p>
          ) : null}
        </div>
      }
    </section>
  );
}
