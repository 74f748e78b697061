import { Badge, useNow } from '../components.js';
import { useConsole } from '../context.js';
import { durationLabel } from '../logic/time.js';
import {
  failureDetail,
  tokensLabel,
  turnAttempts,
  turnDuration,
  turnModel,
  turnTime,
  type TurnFailure,
  type TurnRow,
} from '../logic/turns.js';
import { ModelLabel } from './model.js';

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

/** Where a turn's duration comes from, for its tooltip. */
function durationTitle(row: TurnRow, now: number): string {
  const hub = turnDuration(row, now);
  const onHub = hub === null ? '' : `; ${durationLabel(hub)} from the trigger's admission to the answer's on the hub`;
  if (row.report !== null) return `measured by the agent's runtime${onHub}`;
  return "from the trigger's admission to the answer's, by the hub's clock (the answer carries no turn report)";
}

/** The tokens of a turn: in → out when its report says, else a dash saying why. */
function Tokens(props: { row: TurnRow }) {
  const { report } = props.row;
  if (report?.usage === null || report === null) {
    const why = report === null ? 'not known: the answer carries no turn report' : 'the provider reported no tokens';
    return (
      <span class="muted" title={why}>
        —
      </span>
    );
  }
  const { input, output } = report.usage;
  return (
    <span data-testid="turn-tokens" title={`${input} tokens in, ${output} out, as the provider reported them`}>
      {tokensLabel(report.usage)}
    </span>
  );
}

/** A turn's model calls, `3 (2 retries)`, and its tool calls. */
function Attempts(props: { row: TurnRow }) {
  const counts = turnAttempts(props.row);
  if (counts === null) return <span class="muted">—</span>;
  const { attempts, retries } = counts;
  const tools = props.row.report?.toolCalls ?? null;
  return (
    <>
      {attempts}
      {retries === null || retries === 0 ? null : (
        <>
          {' ('}
          <span data-testid="turn-retries">{retries}</span>
          {retries === 1 ? ' retry)' : ' retries)'}
        </>
      )}
      {tools === null || tools === 0 ? null : (
        <span class="muted">
          {' · '}
          <span data-testid="turn-tool-calls">{tools === 1 ? '1 tool call' : `${tools} tool calls`}</span>
        </span>
      )}
    </>
  );
}

/** A failed turn: its reason and code, its cause in one line, and how many attempts of which model it took. */
function Failure(props: { failure: TurnFailure }) {
  const { failure } = props;
  const detail = failureDetail(failure);
  return (
    <>
      <div class="turn-failure" data-testid="turn-failure">
        {failure.reason || 'no reason given'}
        {failure.code === '' ? '' : ` (${failure.code})`}
        {failure.cause === null ? null : <div class="muted">cause: {failure.cause}</div>}
      </div>
      {detail === '' ? null : (
        <div class="muted small" data-testid="turn-failure-detail">
          {detail}
        </div>
      )}
    </>
  );
}

/**
 * The channel's turns as a timeline: who spoke, what gave them the turn, when it started and ended on the hub's
 * clock, how long it took (the agent's own measure when its answer carries a turn report, else the hub's; a bar
 * scaled to the longest turn), the model, tokens, attempts and retries where known, and how it ended (a failure with
 * its code, reason, cause, attempts and model). The turn being waited for grows live.
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
  const times = turns.map((t) => turnTime(t, now));
  const longest = Math.max(1, ...times.map((d) => d?.ms ?? 0));
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
            <th title="Tokens the model read → wrote over the turn, from the answer's turn report">Tokens</th>
            <th title="Requests made to the model: one per step, retries included">Attempts</th>
            <th>Outcome</th>
          </tr>
        </thead>
        <tbody>
          {turns.map((t, i) => {
            const time = times[i] ?? null;
            const passport = passportOf(t.speakerId);
            const person = t.speakerId === myId || passport?.kind === 'human';
            const model = turnModel(t) ?? (passport === undefined ? null : passport);
            const speaker = t.speakerId === myId ? 'you' : nameOf(t.speakerId);
            return (
              <tr
                key={t.key}
                data-testid="turn-row"
                data-speaker={speaker}
                data-outcome={t.outcome}
                {...(time === null
                  ? {}
                  : { 'data-duration-ms': String(Math.round(time.ms)), 'data-duration-source': time.source })}
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
                <td data-label="Duration" class="duration-cell" title={durationTitle(t, now)}>
                  <span class="duration-bar" aria-hidden="true">
                    <span
                      class={`duration-fill tone-${TONES[t.outcome]}`}
                      style={{ width: `${Math.round(((time?.ms ?? 0) / longest) * 100)}%` }}
                    />
                  </span>
                  <span data-testid="turn-duration">{time === null ? '—' : durationLabel(time.ms)}</span>
                </td>
                <td data-label="Model">
                  <ModelLabel
                    provider={model?.provider ?? null}
                    model={model?.model ?? null}
                    fallback={<span class="muted">{person ? 'person' : '—'}</span>}
                  />
                </td>
                <td data-label="Tokens">
                  <Tokens row={t} />
                </td>
                <td data-label="Attempts" data-testid="turn-attempts">
                  <Attempts row={t} />
                </td>
                <td data-label="Outcome">
                  <Badge value={t.outcome} tone={TONES[t.outcome]} />
                  {t.tool === null ? null : <span class="muted"> {t.tool}</span>}
                  {t.failure === null ? null : <Failure failure={t.failure} />}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
