import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, describeError } from '../api.js';
import type { Channel, Envelope } from '../api-types.js';
import { Badge, ErrorAlert, Loading, Time, useNow } from '../components.js';
import { useConsole } from '../context.js';
import { EV_INVITE, EV_INVITE_ACK } from '../logic/envelopes.js';
import { nameIds } from '../logic/ids.js';
import { parseTime, ttlLabel } from '../logic/time.js';
import { turnLabel, whoseTurn } from '../logic/turn.js';
import { envelopeOfEvent, streamError } from '../stream.js';
import { Composer } from './composer.js';
import { Transcript } from './transcript.js';
import { WorkflowGraph } from './workflow-graph.js';

const ENDED = new Set(['closing', 'closed', 'expired']);

/** One channel: its header and whose turn, the transcript live, the composer, and a workflow's graph. */
export function ChannelView(props: { channelId: string }) {
  const { api, session, myId, nameOf: directoryName, knownName, learn } = useConsole();
  // The signed-in person by the name they signed in with, before the directory has listed them.
  const nameOf = useCallback(
    (agentId: string) => (agentId === myId ? session.name : directoryName(agentId)),
    [myId, session.name, directoryName],
  );
  const now = useNow(5000);
  const id = props.channelId;
  const [channel, setChannel] = useState<Channel | null>(null);
  const [state, setState] = useState<Record<string, unknown> | null>(null);
  const [envelopes, setEnvelopes] = useState<ReadonlyMap<number, Envelope>>(new Map());
  const [raw, setRaw] = useState(false);
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const refreshing = useRef(false);
  // The hub's messages name agents by id: the alert names the ones the console knows.
  const failed = useCallback(
    (err: unknown) => {
      const { code, message } = describeError(err);
      setError({ code, message: nameIds(message, (id) => (id === myId ? session.name : knownName(id))) });
    },
    [knownName, myId, session.name],
  );

  // The stream's handlers outlive a render: they reach the newest `failed` (names learnt since) through a ref.
  const failedRef = useRef(failed);
  failedRef.current = failed;

  const refresh = useCallback(async () => {
    if (refreshing.current) return;
    refreshing.current = true;
    try {
      const [meta, adapter] = await Promise.all([api.channel(id), api.channelState(id)]);
      setChannel(meta.channel);
      setState(adapter.state);
      learn(meta.channel.participants.map((p) => p.agent_id));
    } catch (err) {
      failed(err);
    } finally {
      refreshing.current = false;
    }
  }, [api, id, learn, failed]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), 3000);
    return () => clearInterval(timer);
  }, [refresh]);

  // The log live from its first envelope; EventSource resumes after a drop with Last-Event-ID by itself.
  useEffect(() => {
    const path = `/v1/channels/${encodeURIComponent(id)}/stream`;
    const source = new EventSource(api.streamUrl(path, { since: 1 }));
    let stopped = false;
    source.addEventListener('envelope', (event) => {
      const envelope = envelopeOfEvent(event);
      if (envelope?.sequence === undefined) return;
      const sequence = envelope.sequence;
      setEnvelopes((m) => (m.has(sequence) ? m : new Map(m).set(sequence, envelope)));
      const violators = envelope.event_data['violators'];
      learn([
        envelope.sender_id,
        ...(envelope.audience ?? []),
        ...(Array.isArray(violators) ? violators.filter((v: unknown): v is string => typeof v === 'string') : []),
      ]);
      void refresh();
    });
    source.addEventListener('error', (event) => {
      const failure = streamError(event);
      if (failure !== null) failedRef.current(new ApiError({ ...failure, status: 0 }));
      else if (source.readyState === EventSource.CLOSED) {
        // Refused before it started (say, access_denied to a non-participant): show the refusal itself.
        void api.streamRefusal(path, { since: 1 }).then((refusal) => {
          if (stopped) return;
          const { code, message } = refusal ?? {
            code: 'unavailable',
            message: 'the live transcript stopped; reload the page to follow it again',
          };
          failedRef.current(new ApiError({ code, message, status: 0 }));
        });
      }
    });
    return () => {
      stopped = true;
      source.close();
    };
  }, [api, id]);

  // An alert is about the channel as it was: a change of state (opened, closed, expired) clears it.
  const channelState = channel?.state;
  const seenState = useRef(channelState);
  useEffect(() => {
    if (seenState.current !== undefined && seenState.current !== channelState) setError(null);
    seenState.current = channelState;
  }, [channelState]);

  const list = useMemo(
    () => [...envelopes.values()].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0)),
    [envelopes],
  );

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

  const ended = ENDED.has(channel.state);
  const turn = whoseTurn(channel, state);
  const invited = myId !== null && channel.pending_acks.includes(myId);
  const isParticipant = myId !== null && channel.participants.some((p) => p.agent_id === myId);
  const expires = parseTime(channel.expires_at);

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
    const invite = list
      .filter((e) => e.event_type === EV_INVITE && (e.audience === null || e.audience.includes(myId ?? '')))
      .pop();
    return act(() =>
      api.post(id, {
        event_type: EV_INVITE_ACK,
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
            {channel.manifest.type} <span class="mono muted small">{channel.channel_id}</span>
          </h1>
          <Badge value={channel.state} />
          {channel.close_reason === '' ? null : <span class="muted">({channel.close_reason})</span>}
        </div>
        <dl class="fields inline">
          {channel.labels['intent'] === undefined ? null : (
            <>
              <dt>Intent</dt>
              <dd>{channel.labels['intent']}</dd>
            </>
          )}
          <dt>Participants</dt>
          <dd>
            {[...channel.participants]
              .sort((a, b) => a.order - b.order)
              .map((p) => `${p.agent_id === myId ? 'you' : nameOf(p.agent_id)} (${p.role})`)
              .join(', ')}
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
            <span title={expires === null ? undefined : new Date(expires).toLocaleString()}>
              {ttlLabel(channel.state, expires, now)}
            </span>
          </dd>
        </dl>
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
          <button type="button" aria-pressed={raw} onClick={() => setRaw((r) => !r)}>
            Raw JSON
          </button>
        </div>
      </div>
      <ErrorAlert error={error} onDismiss={() => setError(null)} />
      {channel.manifest.type === 'workflow' ? (
        <WorkflowGraph channel={channel} state={state} envelopes={list} myId={myId} nameOf={nameOf} />
      ) : null}
      <Transcript
        envelopes={list}
        now={now}
        raw={raw}
        myId={myId}
        participants={channel.participants.map((p) => p.agent_id)}
        nameOf={nameOf}
      />
      {session.operator || ended || invited || !isParticipant ? null : (
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
