import { Badge, useNow } from '../components.js';
import { useConsole } from '../context.js';
import { durationLabel } from '../logic/time.js';
import { turnDuration, type TurnRow } from '../logic/turns.js';

const TONES = { answered: 'ok', handoff: 'info', finish: 'info', failed: 'bad', waiting: 'wait' } as const;

/** A clock time to the tenth of a second, "15:24:33.1", with the date in the title. */
function ClockTime(props: { at: number | null }) {
  if (props.at === null) return <span class="muted">—</span>;
  const date = new Date(props.at);
  const text = `${date.toLocaleTimeString([], { hour12: false })}.${Math.floor(date.getMilliseconds() / 100)}`;
  return (
    <time dateTime={date.toISOString()} title={date.toLocaleString()}>
      {text}
    </time>
  );
}

/**
 * The channel's turns as a timeline: who spoke, what gave them the turn, when it started and ended and how long it
 * took (a bar scaled to the longest turn), the model, tokens and retries where known, and how it ended (a failure
 * with its code, reason and cause). The turn being waited for grows live.
 */
export function TurnTimeline(props: {
  turns: readonly TurnRow[];
  myId: string | null;
  nameOf: (id: string) => string;
}) {
  const { agents } = useConsole();
  const now = useNow(1000);
  const { turns, myId, nameOf } = props;
  if (turns.length === 0) {
    return (
      <div class="timeline" data-testid="turns">
        <p class="empty">No turns yet: a turn is a message (or a failure) answering the one before it.</p>
      </div>
    );
  }
  const durations = turns.map((t) => turnDuration(t, now));
  const longest = Math.max(1, ...durations.map((d) => d ?? 0));
  const passportOf = (id: string) => agents.find((a) => a.agent_id === id);
  return (
    <div class="timeline" data-testid="turns">
      <table class="table compact stack">
        <thead>
          <tr>
            <th>Speaker</th>
            <th>Answers</th>
            <th>Started</th>
            <th>Ended</th>
            <th>Duration</th>
            <th>Model</th>
            <th title="Tokens the model used: not in the log (the runner does not publish them)">Tokens</th>
            <th>Retries</th>
            <th>Outcome</th>
          </tr>
        </thead>
        <tbody>
          {turns.map((t, i) => {
            const duration = durations[i] ?? null;
            const passport = passportOf(t.speakerId);
            const person = t.speakerId === myId || passport?.kind === 'human';
            const model =
              t.failure?.model ??
              (passport?.model === null || passport?.model === undefined
                ? null
                : [passport.provider, passport.model].filter((p) => p !== null).join(' / '));
            const speaker = t.speakerId === myId ? 'you' : nameOf(t.speakerId);
            return (
              <tr
                key={t.key}
                data-testid="turn-row"
                data-speaker={speaker}
                data-outcome={t.outcome}
                {...(duration === null ? {} : { 'data-duration-ms': String(Math.round(duration)) })}
              >
                <td data-label="Speaker">
                  <strong>{speaker}</strong>
                </td>
                <td data-label="Answers">
                  {t.trigger === null ? (
                    <span class="muted">—</span>
                  ) : (
                    <>
                      {t.trigger.label}{' '}
                      <span class="muted">from {t.trigger.senderId === myId ? 'you' : nameOf(t.trigger.senderId)}</span>
                    </>
                  )}
                </td>
                <td data-label="Started">
                  <ClockTime at={t.startedAt} />
                </td>
                <td data-label="Ended">
                  {t.outcome === 'waiting' ? <span class="muted">running</span> : <ClockTime at={t.endedAt} />}
                </td>
                <td data-label="Duration" class="duration-cell">
                  <span class="duration-bar" aria-hidden="true">
                    <span
                      class={`duration-fill tone-${TONES[t.outcome]}`}
                      style={{ width: `${Math.round(((duration ?? 0) / longest) * 100)}%` }}
                    />
                  </span>
                  <span data-testid="turn-duration">{duration === null ? '—' : durationLabel(duration)}</span>
                </td>
                <td data-label="Model">{model ?? <span class="muted">{person ? 'person' : '—'}</span>}</td>
                <td data-label="Tokens">
                  <span class="muted" title="not in the log: the runner does not publish token counts">
                    —
                  </span>
                </td>
                <td data-label="Retries" data-testid="turn-retries">
                  {t.failure?.attempts === null || t.failure === null ? (
                    <span class="muted">—</span>
                  ) : (
                    String(t.failure.attempts - 1)
                  )}
                </td>
                <td data-label="Outcome">
                  <Badge value={t.outcome} tone={TONES[t.outcome]} />
                  {t.tool === null ? null : <span class="muted"> {t.tool}</span>}
                  {t.failure === null ? null : (
                    <div class="turn-failure" data-testid="turn-failure">
                      {t.failure.reason || 'no reason given'}
                      {t.failure.code === '' ? '' : ` (${t.failure.code})`}
                      {t.failure.cause === null ? null : <div class="muted">cause: {t.failure.cause}</div>}
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
