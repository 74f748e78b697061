import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Envelope } from '@ag2net/protocol';
import { Time } from '../components.js';
import { envelopeKind, eventSummary, isPrivate, messageText, packetRouting } from '../logic/envelopes.js';

const ICONS = { message: '', event: '•', violation: '⚠', failure: '✖' } as const;

/** A channel's transcript: messages as bubbles, protocol events as compact lines, violations and failures marked. */
export function Transcript(props: {
  envelopes: readonly Envelope[];
  now: number;
  raw: boolean;
  myId: string | null;
  /** The channel's participants: an audience naming all of them is not private. */
  participants: readonly string[];
  nameOf: (id: string) => string;
}) {
  const { envelopes, now, raw, myId, participants, nameOf } = props;
  const box = useRef<HTMLDivElement>(null);
  // Follows the end while the reader is there. Only the reader scrolling up stops it (the console's own scrolls
  // only go down, and a scroll event can arrive after more lines were added, far from the new end); reaching the
  // end again resumes it.
  const stick = useRef(true);
  const lastTop = useRef(0);
  useLayoutEffect(() => {
    const el = box.current;
    if (el !== null && stick.current) el.scrollTop = el.scrollHeight;
  }, [envelopes.length, raw]);

  return (
    <div
      class="transcript"
      data-testid="transcript"
      ref={box}
      onScroll={(e) => {
        const el = e.currentTarget;
        if (el.scrollHeight - el.scrollTop - el.clientHeight < 40) stick.current = true;
        else if (el.scrollTop < lastTop.current) stick.current = false;
        lastTop.current = el.scrollTop;
      }}
    >
      {envelopes.length === 0 ? <p class="empty">Nothing said yet.</p> : null}
      {envelopes.map((e) => {
        const kind = envelopeKind(e.event_type);
        const sender = nameOf(e.sender_id);
        // The hub posts a violation in the channel's opener's name: the line is the hub's, naming who broke what.
        const hubLine = kind === 'violation';
        const mine = !hubLine && e.sender_id === myId;
        const priv = isPrivate(e, participants);
        const audience = (e.audience ?? []).map((id) => (id === myId ? 'you' : nameOf(id)));
        const routing = packetRouting(e);
        return (
          <div
            key={e.sequence ?? e.envelope_id}
            class={`env env-${kind}${mine ? ' env-mine' : ''}`}
            data-testid="envelope"
            data-sequence={e.sequence}
            data-event-type={e.event_type}
            data-sender={sender}
            data-kind={kind}
            {...(priv ? { 'data-private': 'true' } : {})}
          >
            <div class="env-head">
              {kind === 'message' ? null : (
                <span class="env-icon" aria-hidden="true">
                  {ICONS[kind]}
                </span>
              )}
              <strong class="env-sender">{hubLine ? 'hub' : mine ? 'you' : sender}</strong>
              {kind === 'violation' ? <span class="badge badge-bad">violation</span> : null}
              {kind === 'failure' ? <span class="badge badge-warn">turn failed</span> : null}
              {kind !== 'message' ? <span class="env-summary">{eventSummary(e, nameOf)}</span> : null}
              {routing === null ? null : (
                <span class="badge badge-info" title={routing.reason}>
                  {routing.kind}
                  {routing.tool === '' ? '' : ` via ${routing.tool}`}
                </span>
              )}
              {priv ? <span class="badge badge-private">private to {audience.join(', ') || 'nobody else'}</span> : null}
              <span class="env-meta">
                #{e.sequence ?? '?'} · <Time at={e.created_at} now={now} />
              </span>
            </div>
            {kind === 'message' ? <div class="env-body">{messageText(e) || <em class="muted">(empty)</em>}</div> : null}
            {routing !== null && routing.reason !== '' ? <div class="env-note muted">{routing.reason}</div> : null}
            {raw ? <pre class="raw">{JSON.stringify(e, null, 2)}</pre> : null}
          </div>
        );
      })}
    </div>
  );
}
