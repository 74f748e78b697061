import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import type { HubHealth, HubStatus } from '../../../src/api-schemas.js';
import { Badge, Loading, usePoll, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { answeringHeld, partitionRanges, partitionsOf, servingSummary, unheldWarning } from '../logic/partitions.js';
import { shortDuration } from '../logic/time.js';

/**
 * The hubs: the answering hub's health and the partitions it holds for everyone; for the operator, when the bridge
 * serves `/v1/hub/status`, every hub with the partitions it holds, every partition with its holder and epoch, a
 * warning while a partition has no holder, and the delivery lag.
 */
export function HubView() {
  const { api, session, reportError } = useConsole();
  const [health, setHealth] = useState<HubHealth | null>(null);
  const [status, setStatus] = useState<HubStatus | null>(null);

  // Two polls, so that a health request waiting for a frozen hub never holds back the status that shows it.
  usePoll(
    async () => {
      try {
        setHealth(await api.hubHealth());
      } catch (err) {
        reportError(err);
      }
    },
    5000,
    [api],
  );
  usePoll(
    async () => {
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

  if (health === null && status === null) return <Loading />;
  const held = health === null ? [] : answeringHeld(health);
  // The deployment's count as the roster reports it, else as the answering hub does.
  const partitions = status?.partitions ?? health?.health.partitions ?? 1;
  const partitioned = partitions > 1;
  return (
    <section>
      <ViewHeader title="Hub" />
      <StatusWarning status={status} />
      <div class="grid-2">
        <AnsweringHub health={health} partitions={partitions} held={held.map((p) => p.partition)} />
        <div class="card">
          {partitioned ? (
            <>
              <h2>Partitions</h2>
              <p data-testid="partition-summary">
                {status === null
                  ? `Channels are spread over ${partitions} partitions; operators see which hub holds each.`
                  : servingSummary(partitions, status.holders)}
              </p>
            </>
          ) : (
            <SingleLease health={health} status={status} />
          )}
          <h2 class="spaced">Delivery</h2>
          <Delivery status={status} operator={session.operator} />
        </div>
      </div>
      <HubsTable
        health={health}
        status={status}
        partitioned={partitioned}
        operator={session.operator}
        held={held.map((p) => p.partition)}
      />
      {status !== null && partitioned ? <PartitionGrid status={status} /> : null}
    </section>
  );
}

/** The hub that answered `/v1/hub/health`: its role, its epoch or the partitions it holds, uptime and counters. */
function AnsweringHub(props: { health: HubHealth | null; partitions: number; held: readonly number[] }) {
  const { partitions, held } = props;
  if (props.health === null) {
    return (
      <div class="card" data-testid="hub-health">
        <h2>Answering hub</h2>
        <p class="muted">Waiting for a hub to answer…</p>
      </div>
    );
  }
  const h = props.health.health;
  return (
    <div class="card" data-testid="hub-health">
      <h2>
        Answering hub <Badge value={h.role} tone={h.role === 'active' ? 'ok' : 'off'} />
      </h2>
      <dl class="fields">
        <dt>Hub id</dt>
        <dd class="mono">{h.hub_id}</dd>
        {partitions > 1 ? (
          <>
            <dt>Partitions held</dt>
            <dd data-testid="answering-held">
              {held.length === 0 ? `none of ${partitions}` : `${partitionRanges(held)} of ${partitions}`}
            </dd>
          </>
        ) : (
          <>
            <dt>Epoch</dt>
            <dd>{h.epoch}</dd>
          </>
        )}
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
  );
}

/** The delivery lag summed over the held partitions, or why there is none to show. */
function Delivery(props: { status: HubStatus | null; operator: boolean }) {
  const delivery = props.status?.delivery ?? null;
  if (delivery === null) {
    return (
      <p class="muted" data-testid="delivery-lag">
        {!props.operator
          ? 'Delivery lag is shown to operators.'
          : props.status === null
            ? 'Delivery lag is not reported by this bridge.'
            : 'No hub holding a partition reports a delivery lag.'}
      </p>
    );
  }
  return (
    <dl class="fields" data-testid="delivery-lag">
      <dt>Pending</dt>
      <dd>{delivery.pending}</dd>
      <dt>Awaiting ack</dt>
      <dd>{delivery.ack_pending}</dd>
      <dt>Oldest pending</dt>
      <dd>
        {delivery.oldest_pending_age_seconds === null ? 'none' : shortDuration(delivery.oldest_pending_age_seconds)}
      </dd>
    </dl>
  );
}

/** The warning the view opens with while the deployment does not serve every channel: no hub, or unheld partitions. */
function StatusWarning(props: { status: HubStatus | null }) {
  const { status } = props;
  if (status === null) return null;
  const text =
    status.hubs.length === 0
      ? 'No hub answers: no channel is served until a hub starts.'
      : unheldWarning(status.unheld, status.partitions ?? 1);
  if (text === null) return null;
  return (
    <div class="alert" role="alert" data-testid="unheld-warning">
      <span class="alert-icon" aria-hidden="true">
        ⚠
      </span>
      <span data-testid="unheld-warning-text">{text}</span>
    </div>
  );
}

/** The only partition's lease: its holder and epoch, as the roster reports it, else as the answering hub does. */
function SingleLease(props: { health: HubHealth | null; status: HubStatus | null }) {
  const fromStatus = props.status?.holders[0]?.held_by[0];
  const lease =
    props.status === null
      ? (props.health?.lease ?? null)
      : fromStatus === undefined
        ? null
        : { holder: fromStatus.hub_id, epoch: fromStatus.epoch };
  return (
    <>
      <h2>Lease</h2>
      {lease === null ? (
        <p class="muted">
          {props.status === null ? 'A standby answered: it does not hold the lease.' : 'No hub holds the lease.'}
        </p>
      ) : (
        <dl class="fields">
          <dt>Active hub</dt>
          <dd class="mono">{lease.holder}</dd>
          <dt>Epoch</dt>
          <dd>{lease.epoch}</dd>
        </dl>
      )}
    </>
  );
}

/** Every hub (the answering one only without the status): role, epoch or held partitions, uptime and counters. */
function HubsTable(props: {
  health: HubHealth | null;
  status: HubStatus | null;
  partitioned: boolean;
  operator: boolean;
  held: readonly number[];
}) {
  const { status, partitioned } = props;
  const heldOf = (hubId: string): readonly number[] =>
    status === null ? props.held : partitionsOf(hubId, status.holders);
  const hubs = status?.hubs ?? (props.health === null ? [] : [props.health.health]);
  return (
    <div class="card" data-testid="hubs">
      <h2>Hubs</h2>
      <div class="table-scroll">
        <table class="table">
          <thead>
            <tr>
              <th>Hub id</th>
              <th>Role</th>
              <th>{partitioned ? 'Partitions' : 'Epoch'}</th>
              <th>Up for</th>
              <th>Open channels</th>
              <th>Quarantined</th>
              <th>Dead letters</th>
            </tr>
          </thead>
          <tbody>
            {hubs.map((hub) => (
              <tr
                key={hub.hub_id}
                data-testid="hub-row"
                data-role={hub.role}
                data-hub-id={hub.hub_id}
                data-partitions={partitionRanges(heldOf(hub.hub_id))}
              >
                <td class="mono">{hub.hub_id}</td>
                <td>
                  <Badge value={hub.role} tone={hub.role === 'active' ? 'ok' : 'off'} />
                </td>
                <td>{partitioned ? partitionRanges(heldOf(hub.hub_id)) : hub.epoch}</td>
                <td>{shortDuration(hub.uptime_seconds)}</td>
                <td>{hub.active_channels}</td>
                <td>{hub.quarantined}</td>
                <td>{hub.dead_letters}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {hubs.length === 0 ? <p class="muted">No hub answered the roster.</p> : null}
      {status === null ? (
        <p class="muted">
          {props.operator
            ? 'Only the hub that answered is shown: this bridge does not report the others.'
            : 'Only the hub that answered is shown; operators see every hub.'}
        </p>
      ) : null}
    </div>
  );
}

/** Every partition as a tile: its holder and the holder's epoch, or a warning that no hub holds it. */
function PartitionGrid(props: { status: HubStatus }) {
  return (
    <div class="card" data-testid="partitions">
      <h2>Partition holders</h2>
      <div class="partition-grid">
        {props.status.holders.map((p) => (
          <div
            key={p.partition}
            class={`partition-tile${p.held_by.length === 0 ? ' partition-unheld' : ''}`}
            data-testid="partition"
            data-partition={p.partition}
            data-holder={p.held_by.map((h) => h.hub_id).join(' ')}
          >
            <span class="partition-index">Partition {p.partition}</span>{' '}
            {p.held_by.length === 0 ? (
              <span class="partition-holder">no holder</span>
            ) : (
              p.held_by.map((h, i) => (
                <span class="partition-holder" key={h.hub_id}>
                  {i > 0 ? ' ' : ''}
                  <span class="mono">{h.hub_id}</span> epoch {h.epoch}
                </span>
              ))
            )}
          </div>
        ))}
      </div>
    </div>
  );
}
