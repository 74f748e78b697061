import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { CONSULTING_TYPE, CONVERSATION_TYPE, DISCUSSION_TYPE, WORKFLOW_TYPE } from '@ag2net/adapters';
import { ChannelState, type ChannelMetadata } from '@ag2net/protocol';
import type { ChannelPreview } from '../../../src/api-schemas.js';
import { Badge, Empty, FilterSelect, Loading, Time, useNow, usePoll, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { envelopeOfEvent } from '../stream.js';
import { channelTurn, turnLabel } from '../logic/turn.js';
import { expiredOnLabel } from '../logic/history.js';
import { channelLabel } from '../logic/ids.js';
import { foldEnvelope, foldPreview, isEnded, mergeChannel } from '../logic/live.js';
import { channelMatches, searchTerms } from '../logic/search.js';
import { parseTime, ttlLabel } from '../logic/time.js';
import { NewChannelForm } from './new-channel.js';

const STATES = Object.values(ChannelState);
const TYPES = [CONSULTING_TYPE, CONVERSATION_TYPE, DISCUSSION_TYPE, WORKFLOW_TYPE];
/** How long a channel's adapter state is trusted before the list asks again (a delivery asks at once). */
const STATE_MAX_AGE_MS = 5000;
/**
 * How often the list is read again, in ms. A person's list changes live with their deliveries between reads, but
 * those leave out what the hub writes in the person's own name (it writes a channel's opening and close in its
 * creator's); the operator, who has no deliveries, relies on the reads.
 */
const READ_EVERY_MS = { person: 5000, operator: 3000 } as const;

/** A row of the list: the channel as its log says now, and its last message. */
interface Row {
  readonly channel: ChannelMetadata;
  readonly preview: ChannelPreview | undefined;
}

/** The newer of two previews of one channel (by the log's last sequence). */
function newer(a: ChannelPreview | undefined, b: ChannelPreview | undefined): ChannelPreview | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.last_sequence >= a.last_sequence ? b : a;
}

/**
 * The caller's channels, live: read with their previews (last message), then changed by each delivery of the person's
 * stream with the same folds the channel page uses (a close shows at once); searched by name, intent, participants
 * and last message. A channel whose history expired is marked `history expired`, with when, instead of a message.
 */
export function ChannelsView() {
  const { api, session, myId, nameOf, learn, reportError } = useConsole();
  const now = useNow(5000);
  const [rows, setRows] = useState<ReadonlyMap<string, Row> | null>(null);
  const [states, setStates] = useState<ReadonlyMap<string, Record<string, unknown> | null>>(new Map());
  const [state, setState] = useState('');
  const [type, setType] = useState('');
  const [query, setQuery] = useState('');
  const [creating, setCreating] = useState(false);
  const fetchedAt = useRef(new Map<string, number>());
  /** The channels of the last read: a delivery of another one (a new invite) reads the list again. */
  const listed = useRef<ReadonlySet<string>>(new Set());
  const [bump, setBump] = useState(0);

  usePoll(
    async () => {
      try {
        const page = await api.channels({ state, type, preview: 'true' });
        listed.current = new Set(page.channels.map((c) => c.channel_id));
        setRows((known) => {
          const next = new Map<string, Row>();
          for (const c of page.channels) {
            const old = known?.get(c.channel_id);
            next.set(c.channel_id, {
              channel: mergeChannel(old?.channel, c),
              preview: newer(old?.preview, page.previews?.[c.channel_id]),
            });
          }
          return next;
        });
        learn([
          ...page.channels.flatMap((c) => c.participants.map((p) => p.agent_id)),
          ...Object.values(page.previews ?? {}).flatMap((p) =>
            p.last_message === null ? [] : [p.last_message.sender_id],
          ),
        ]);
      } catch (err) {
        reportError(err);
      }
    },
    session.operator ? READ_EVERY_MS.operator : READ_EVERY_MS.person,
    [api, state, type, bump],
  );

  // Adapter states of the live channels, for whose turn it is.
  useEffect(() => {
    if (rows === null) return;
    const at = Date.now();
    for (const { channel: c } of rows.values()) {
      if (c.state !== 'active') continue;
      if (at - (fetchedAt.current.get(c.channel_id) ?? 0) < STATE_MAX_AGE_MS) continue;
      fetchedAt.current.set(c.channel_id, at);
      api.channelState(c.channel_id).then(
        (reply) => setStates((m) => new Map(m).set(c.channel_id, reply.state)),
        () => {},
      );
    }
  }, [rows, api]);

  // A delivery changes its channel's row at once (state, last message); its adapter state is read again, and a
  // channel the list does not know yet (a new invite) makes it read the list.
  useEffect(() => {
    if (session.operator) return;
    const source = new EventSource(api.streamUrl('/v1/me/stream'));
    source.addEventListener('envelope', (event) => {
      const envelope = envelopeOfEvent(event);
      if (envelope === null) return;
      fetchedAt.current.delete(envelope.channel_id);
      learn([envelope.sender_id]);
      if (!listed.current.has(envelope.channel_id)) {
        setBump((n) => n + 1);
        return;
      }
      // Whose turn may have moved too: the state effect reads it again, as the delivery cleared its age.
      setRows((known) => {
        const row = known?.get(envelope.channel_id);
        if (known === null || row === undefined) return known;
        const next = new Map(known);
        next.set(envelope.channel_id, {
          channel: foldEnvelope(row.channel, envelope),
          preview: foldPreview(row.preview, envelope),
        });
        return next;
      });
    });
    return () => source.close();
  }, [api, session.operator, learn]);

  const terms = searchTerms(query);
  const shown = useMemo(() => {
    if (rows === null) return null;
    const lastActive = (r: Row): string => r.preview?.last_activity_at ?? r.channel.created_at;
    return (
      [...rows.values()]
        // A delivery may have moved a row out of the state asked for before the next read drops it.
        .filter((r) => state === '' || r.channel.state === state)
        .filter((r) => channelMatches(r.channel, terms, { nameOf, preview: r.preview }))
        .sort((a, b) => lastActive(b).localeCompare(lastActive(a)))
    );
  }, [rows, query, state, nameOf]);

  return (
    <section>
      <ViewHeader title="Channels">
        <input
          type="search"
          name="q"
          class="search"
          placeholder="Search by name, people or message"
          aria-label="Search channels"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <FilterSelect name="state" label="State" value={state} options={STATES} onChange={setState} />
        <FilterSelect name="type" label="Type" value={type} options={TYPES} onChange={setType} />
        {session.operator ? null : (
          <button type="button" class="primary" onClick={() => setCreating((c) => !c)}>
            New channel
          </button>
        )}
      </ViewHeader>
      {creating ? <NewChannelForm onCancel={() => setCreating(false)} /> : null}
      {shown === null ? (
        <Loading />
      ) : shown.length === 0 ? (
        <Empty>
          {terms.length > 0
            ? `No channel matches “${query.trim()}”.`
            : state !== '' || type !== ''
              ? 'No channel matches these filters.'
              : session.operator
                ? 'No channels yet — they appear here as people and agents open them.'
                : 'No channels yet — open one with New channel.'}
        </Empty>
      ) : (
        <table class="table stack channels">
          <thead>
            <tr>
              <th>Channel</th>
              <th>State</th>
              <th>Participants</th>
              <th>Whose turn</th>
              <th>Last activity</th>
              <th>TTL</th>
            </tr>
          </thead>
          <tbody>
            {shown.map(({ channel: c, preview }) => {
              const turn = channelTurn(c, states.get(c.channel_id) ?? null);
              const expires = parseTime(c.expires_at);
              const href = `#/channels/${encodeURIComponent(c.channel_id)}`;
              const message = preview?.last_message ?? null;
              return (
                <tr
                  key={c.channel_id}
                  data-testid="channel-row"
                  data-channel-id={c.channel_id}
                  data-type={c.manifest.type}
                  data-state={c.state}
                  data-history={c.expired_at === undefined ? 'kept' : 'expired'}
                  class="clickable"
                  onClick={(e) => {
                    if (!(e.target instanceof HTMLAnchorElement)) location.hash = href;
                  }}
                >
                  <td class="channel-cell">
                    <a href={href} title={c.channel_id}>
                      {channelLabel(c)}
                    </a>{' '}
                    <span class="chip">{c.manifest.type}</span>
                    <div class="preview muted" data-testid="channel-preview">
                      {c.expired_at !== undefined ? (
                        <em title={c.expired_at}>History expired {expiredOnLabel(c.expired_at)}</em>
                      ) : message === null ? (
                        <em>No messages yet</em>
                      ) : (
                        <>
                          <strong>{message.sender_id === myId ? 'you' : nameOf(message.sender_id)}:</strong>{' '}
                          {message.text === '' ? <em>(empty)</em> : message.text}
                        </>
                      )}
                    </div>
                  </td>
                  <td data-label="State">
                    <Badge value={c.state} />
                    {c.expired_at === undefined ? null : (
                      <>
                        {' '}
                        <Badge value="history expired" tone="off" />
                      </>
                    )}
                  </td>
                  <td data-label="Participants">
                    {[...c.participants]
                      .sort((a, b) => a.order - b.order)
                      .map((p) => (p.agent_id === myId ? 'you' : nameOf(p.agent_id)))
                      .join(', ')}
                  </td>
                  <td data-label="Whose turn">
                    <span class={turn.kind === 'agent' && turn.agentId === myId ? 'turn-mine' : ''}>
                      {turnLabel(turn, nameOf, myId)}
                    </span>
                  </td>
                  <td data-label="Last activity">
                    <Time at={preview?.last_activity_at ?? c.created_at} now={now} />
                  </td>
                  <td data-label="TTL">
                    <span
                      data-testid="ttl"
                      class={expires === null || isEnded(c.state) ? 'muted' : ''}
                      title={expires === null ? undefined : new Date(expires).toLocaleString()}
                    >
                      {ttlLabel(c, now)}
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
