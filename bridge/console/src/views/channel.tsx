import { Fragment } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api.js';
import { WORKFLOW_TYPE } from '@ag2net/adapters';
import type { ChannelMetadata } from '@ag2net/protocol';
import { Badge, ErrorAlert, Loading, Presence, Time, useNow } from '../components.js';
import { useConsole } from '../context.js';
import { useLiveChannel } from '../live-channel.js';
import { EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK } from '@ag2net/protocol';
import { nameIds } from '../logic/ids.js';
import { expiredOnLabel, keptLabel } from '../logic/history.js';
import { isEnded } from '../logic/live.js';
import { parseTime, ttlLabel } from '../logic/time.js';
import { channelTurn, turnLabel } from '../logic/turn.js';
import { turnsOf } from '../logic/turns.js';
import { Composer } from './composer.js';
import { Transcript } from './transcript.js';
import { TurnTimeline } from './turns.js';
import { WorkflowGraph } from './workflow-graph.js';

type Tab = 'transcript' | 'turns';

/**
 * One channel: its header and whose turn, the transcript or the turns live, the composer, and a workflow's graph; for a
 * channel whose history expired, its header and a notice that says when instead.
 */
export function ChannelView(props: { channelId: string }) {
  const { api, session, myId, nameOf: directoryName, knownName, learn, activity, refreshActivity } = useConsole();
  // The signed-in person by the name they signed in with, before the directory has listed them.
  const nameOf = useCallback(
    (agentId: string) => (agentId === myId ? session.name : directoryName(agentId)),
    [myId, session.name, directoryName],
  );
  const now = useNow(5000);
  const id = props.channelId;
  const [raw, setRaw] = useState(false);
  const [tab, setTab] = useState<Tab>('transcript');
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  // The hub's messages name agents by id: the alert names the ones the console knows.
  const failed = useCallback(
    (err: unknown) => {
      const { code, message } = describeError(err);
      setError({ code, message: nameIds(message, (id) => (id === myId ? session.name : knownName(id))) });
    },
    [knownName, myId, session.name],
  );
  const { channel, state, envelopes, expiredAt, refresh } = useLiveChannel({
    api,
    channelId: id,
    onError: failed,
    onIds: learn,
  });

  // An alert is about the channel as it was: a change of state (opened, closed, expired) clears it.
  const channelState = channel?.state;
  const seenState = useRef(channelState);
  useEffect(() => {
    if (seenState.current !== undefined && seenState.current !== channelState) setError(null);
    seenState.current = channelState;
  }, [channelState]);
  // Someone spoke: who is online may have changed.
  const count = envelopes.length;
  useEffect(() => {
    if (count > 0) refreshActivity();
  }, [count, refreshActivity]);

  if (channel === null) {
    return (
      <section>
        <p class="crumbs">
          <a href="#/channels">Channels</a> /
        </p>
        {error === null ? <Loading /> : <ErrorAlert error={error} />}
      </section>
    );
  }

  const ended = isEnded(channel.state);
  const turn = channelTurn(channel, state);
  const invited = myId !== null && channel.pending_acks.includes(myId);
  const isParticipant = myId !== null && channel.participants.some((p) => p.agent_id === myId);
  const expires = parseTime(channel.expires_at);
  const turns = turnsOf(envelopes, turn.kind === 'agent' ? turn.agentId : null);

  const act = async (what: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await what();
      await refresh();
    } catch (err) {
      failed(err);
    } finally {
      setBusy(false);
    }
  };
  const acceptInvite = (): Promise<void> => {
    const invite = envelopes
      .filter((e) => e.event_type === EV_CHANNEL_INVITE && (e.audience === null || e.audience.includes(myId ?? '')))
      .pop();
    return act(() =>
      api.post(id, {
        event_type: EV_CHANNEL_INVITE_ACK,
        event_data: { channel_id: id },
        ...(invite === undefined || invite.envelope_id === '' ? {} : { causation_id: invite.envelope_id }),
      }),
    );
  };

  return (
    <section class="channel-page">
      <p class="crumbs">
        <a href="#/channels">Channels</a> /
      </p>
      <div
        class="card channel-header"
        data-testid="channel-header"
        data-state={channel.state}
        data-type={channel.manifest.type}
      >
        <div class="channel-title">
          <h1>
            {channel.manifest.type} <span class="mono muted small channel-id">{channel.channel_id}</span>
          </h1>
          <Badge value={channel.state} />
          {expiredAt === null ? null : <Badge value="history expired" tone="off" />}
          {channel.close_reason === '' ? null : (
            <span class="muted" data-testid="close-reason">
              ({channel.close_reason})
            </span>
          )}
          <div class="actions">
            {invited ? (
              <button
                type="button"
                class="primary"
                data-testid="ack-invite"
                disabled={busy}
                onClick={() => void acceptInvite()}
              >
                Accept invite
              </button>
            ) : null}
            {!ended && isParticipant && !session.operator ? (
              <button
                type="button"
                class="danger"
                data-testid="close-channel"
                disabled={busy}
                onClick={() => void act(() => api.closeChannel(id))}
              >
                Close channel
              </button>
            ) : null}
            {expiredAt === null ? (
              <button type="button" aria-pressed={raw} onClick={() => setRaw((r) => !r)}>
                Raw JSON
              </button>
            ) : null}
          </div>
        </div>
        <dl class="fields inline">
          {channel.labels['intent'] === undefined ? null : (
            <>
              <dt>Intent</dt>
              <dd>{channel.labels['intent']}</dd>
            </>
          )}
          <dt>Participants</dt>
          <dd data-testid="participants">
            {[...channel.participants]
              .sort((a, b) => a.order - b.order)
              .map((p, i) => (
                <Fragment key={p.agent_id}>
                  {/* The separator outside the unbreakable name: a line breaks after a comma, never inside a name. */}
                  {i === 0 ? null : ', '}
                  <span class="participant" data-agent-name={nameOf(p.agent_id)}>
                    {p.agent_id === myId ? null : <Presence activity={activity.get(p.agent_id)} now={now} compact />}
                    {p.agent_id === myId ? 'you' : nameOf(p.agent_id)} <span class="muted">({p.role})</span>
                  </span>
                </Fragment>
              ))}
          </dd>
          <dt>Whose turn</dt>
          <dd data-testid="turn" class={turn.kind === 'agent' && turn.agentId === myId ? 'turn-mine' : ''}>
            {turnLabel(turn, nameOf, myId)}
          </dd>
          <dt>Opened</dt>
          <dd>
            <Time at={channel.created_at} now={now} />
          </dd>
          <dt>TTL</dt>
          <dd>
            <span data-testid="ttl" title={expires === null ? undefined : new Date(expires).toLocaleString()}>
              {ttlLabel(channel, now)}
            </span>
          </dd>
        </dl>
      </div>
      <ErrorAlert error={error} onDismiss={() => setError(null)} />
      {expiredAt === null ? null : <HistoryExpired channel={channel} expiredAt={expiredAt} />}
      {expiredAt !== null ? null : channel.manifest.type === WORKFLOW_TYPE ? (
        <WorkflowGraph
          channel={channel}
          next={turn.kind === 'agent' ? turn.agentId : null}
          envelopes={envelopes}
          myId={myId}
          nameOf={nameOf}
        />
      ) : null}
      {expiredAt !== null ? null : (
        <>
          <div class="tabs" role="tablist" aria-label="Channel views">
            <button
              type="button"
              role="tab"
              data-testid="tab-transcript"
              aria-selected={tab === 'transcript'}
              onClick={() => setTab('transcript')}
            >
              Transcript
            </button>
            <button
              type="button"
              role="tab"
              data-testid="tab-turns"
              aria-selected={tab === 'turns'}
              onClick={() => setTab('turns')}
            >
              Turns <span class="muted">({turns.filter((t) => t.outcome !== 'waiting').length})</span>
            </button>
          </div>
          {tab === 'transcript' ? (
            <Transcript
              envelopes={envelopes}
              now={now}
              raw={raw}
              myId={myId}
              participants={channel.participants.map((p) => p.agent_id)}
              nameOf={nameOf}
            />
          ) : (
            <TurnTimeline turns={turns} myId={myId} nameOf={nameOf} />
          )}
        </>
      )}
      {session.operator || ended || invited || !isParticipant || expiredAt !== null ? null : (
        <Composer
          disabled={busy}
          onSend={(text) =>
            api.post(id, { text }).then(
              () => {
                setError(null);
                void refresh();
                return true;
              },
              (err: unknown) => {
                failed(err);
                return false;
              },
            )
          }
        />
      )}
    </section>
  );
}

/**
 * What a channel whose history expired shows instead of its transcript: when it expired and how long the hub kept it
 * after the channel ended. Its metadata (the header) is all that is left.
 */
function HistoryExpired(props: { channel: ChannelMetadata; expiredAt: string }) {
  const kept = keptLabel(props.channel, props.expiredAt);
  return (
    <div class="card history-expired" role="status" data-testid="history-expired">
      <p>
        <strong>
          The history of this channel expired on{' '}
          <time dateTime={props.expiredAt} title={props.expiredAt}>
            {expiredOnLabel(props.expiredAt)}
          </time>
        </strong>
        {kept === null ? '.' : `; it was kept ${kept} after it ended.`}
      </p>
      <p class="muted">
        The hub removes an ended channel’s messages after its retention: its transcript and turns can no longer be read.
        Who took part, and how and when it ended, are above.
      </p>
    </div>
  );
}
