import { useEffect, useRef, useState } from 'preact/hooks';
import type { Channel } from '../api-types.js';
import { Badge, Empty, FilterSelect, Loading, Time, useNow, usePoll, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { envelopeOfEvent } from '../stream.js';
import { turnLabel, whoseTurn } from '../logic/turn.js';
import { channelLabel } from '../logic/ids.js';
import { parseTime, ttlLabel } from '../logic/time.js';
import { NewChannelForm } from './new-channel.js';

const STATES = ['pending', 'active', 'closing', 'closed', 'expired'];
const ENDED = new Set(['closing', 'closed', 'expired']);
const TYPES = ['consulting', 'conversation', 'discussion', 'workflow'];
/** How long a channel's adapter state is trusted before the list asks again (a delivery asks at once). */
const STATE_MAX_AGE_MS = 5000;

/** The caller's channels, live: polled every 2 s, and refreshed on each delivery of the person's stream. */
export function ChannelsView() {
  const { api, session, myId, nameOf, learn, reportError } = useConsole();
  const now = useNow(5000);
  const [channels, setChannels] = useState<readonly Channel[] | null>(null);
  const [states, setStates] = useState<ReadonlyMap<string, Record<string, unknown> | null>>(new Map());
  const [state, setState] = useState('');
  const [type, setType] = useState('');
  const [creating, setCreating] = useState(false);
  const fetchedAt = useRef(new Map<string, number>());
  const [bump, setBump] = useState(0);

  usePoll(
    async () => {
      try {
        const page = await api.channels({ state, type });
        setChannels(page.channels);
        learn(page.channels.flatMap((c) => c.participants.map((p) => p.agent_id)));
      } catch (err) {
        reportError(err);
      }
    },
    2000,
    [api, state, type, bump],
  );

  // Adapter states of the live channels, for whose turn it is.
  useEffect(() => {
    if (channels === null) return;
    const at = Date.now();
    for (const c of channels) {
      if (c.state !== 'active') continue;
      if (at - (fetchedAt.current.get(c.channel_id) ?? 0) < STATE_MAX_AGE_MS) continue;
      fetchedAt.current.set(c.channel_id, at);
      api.channelState(c.channel_id).then(
        (reply) => setStates((m) => new Map(m).set(c.channel_id, reply.state)),
        () => {},
      );
    }
  }, [channels, api]);

  // A delivery means a channel moved: forget its state and read the list again.
  useEffect(() => {
    if (session.operator) return;
    const source = new EventSource(api.streamUrl('/v1/me/stream'));
    source.addEventListener('envelope', (event) => {
      const parsed = envelopeOfEvent(event);
      if (parsed !== null) fetchedAt.current.delete(parsed.channel_id);
      setBump((n) => n + 1);
    });
    return () => source.close();
  }, [api, session.operator]);

  return (
    <section>
      <ViewHeader title="Channels">
        <FilterSelect name="state" label="State" value={state} options={STATES} onChange={setState} />
        <FilterSelect name="type" label="Type" value={type} options={TYPES} onChange={setType} />
        {session.operator ? null : (
          <button type="button" class="primary" onClick={() => setCreating((c) => !c)}>
            New channel
          </button>
        )}
      </ViewHeader>
      {creating ? <NewChannelForm onCancel={() => setCreating(false)} /> : null}
      {channels === null ? (
        <Loading />
      ) : channels.length === 0 ? (
        <Empty>
          {state !== '' || type !== ''
            ? 'No channel matches these filters.'
            : session.operator
              ? 'No channels yet — they appear here as people and agents open them.'
              : 'No channels yet — open one with New channel.'}
        </Empty>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th>Channel</th>
              <th>Type</th>
              <th>State</th>
              <th>Participants</th>
              <th>Whose turn</th>
              <th>Age</th>
              <th>TTL</th>
            </tr>
          </thead>
          <tbody>
            {[...channels]
              .sort((a, b) => b.created_at.localeCompare(a.created_at))
              .map((c) => {
                const turn = whoseTurn(c, states.get(c.channel_id) ?? null);
                const expires = parseTime(c.expires_at);
                const href = `#/channels/${encodeURIComponent(c.channel_id)}`;
                return (
                  <tr
                    key={c.channel_id}
                    data-testid="channel-row"
                    data-channel-id={c.channel_id}
                    data-type={c.manifest.type}
                    data-state={c.state}
                    class="clickable"
                    onClick={(e) => {
                      if (!(e.target instanceof HTMLAnchorElement)) location.hash = href;
                    }}
                  >
                    <td>
                      <a href={href} title={c.channel_id}>
                        {channelLabel(c)}
                      </a>
                    </td>
                    <td>{c.manifest.type}</td>
                    <td>
                      <Badge value={c.state} />
                    </td>
                    <td>
                      {[...c.participants]
                        .sort((a, b) => a.order - b.order)
                        .map((p) => (p.agent_id === myId ? 'you' : nameOf(p.agent_id)))
                        .join(', ')}
                    </td>
                    <td>
                      <span class={turn.kind === 'agent' && turn.agentId === myId ? 'turn-mine' : ''}>
                        {turnLabel(turn, nameOf, myId)}
                      </span>
                    </td>
                    <td>
                      <Time at={c.created_at} now={now} />
                    </td>
                    <td>
                      <span
                        class={expires === null || ENDED.has(c.state) ? 'muted' : ''}
                        title={expires === null ? undefined : new Date(expires).toLocaleString()}
                      >
                        {ttlLabel(c.state, expires, now)}
                      </span>
                    </td>
                  </tr>
                );
              })}
          </tbody>
        </table>
      )}
    </section>
  );
}
