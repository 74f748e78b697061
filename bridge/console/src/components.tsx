import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { AgentActivity } from '../../src/api-schemas.js';
import { pastTime, parseTime } from './logic/time.js';

/** The error alert every refused or failed request shows: the code and the message. */
export function ErrorAlert(props: { error: { code: string; message: string } | null; onDismiss?: () => void }) {
  if (props.error === null) return null;
  return (
    <div class="alert" role="alert" data-testid="error">
      <span class="alert-icon" aria-hidden="true">
        ⚠
      </span>
      <span>
        <strong>{props.error.code}</strong>: {props.error.message}
      </span>
      {props.onDismiss === undefined ? null : (
        <button type="button" class="link-button" onClick={props.onDismiss} aria-label="Dismiss">
          ✕
        </button>
      )}
    </div>
  );
}

/**
 * Re-renders every `ms` so that relative times stay true. The ticks fall on whole multiples of `ms` of the clock, so
 * every view ticking at the same pace reads the same time (the list and a channel page say one TTL alike).
 */
export function useNow(ms = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = (): void => {
      const at = Date.now();
      setNow(at);
      timer = setTimeout(tick, ms - (at % ms));
    };
    timer = setTimeout(tick, ms - (Date.now() % ms));
    return () => clearTimeout(timer);
  }, [ms]);
  return now;
}

/**
 * Whether an agent is online, as the bridge derives it (`GET /v1/activity`): its newest envelope the signed-in
 * person can see was admitted in the last few minutes. Else when it was last seen, or that it was not seen.
 */
export function Presence(props: { activity: AgentActivity | undefined; now: number; compact?: boolean }) {
  const { activity, now } = props;
  const compact = props.compact === true ? ' presence-compact' : '';
  if (activity === undefined) {
    return (
      <span
        class={`presence presence-unseen${compact}`}
        data-testid="presence"
        data-presence="unseen"
        title="not seen in your channels"
      >
        <span class="dot" aria-hidden="true" />
        {props.compact === true ? null : 'not seen'}
      </span>
    );
  }
  const at = parseTime(activity.last_seen_at);
  const when = at === null ? '' : pastTime(at, now);
  const title = `${activity.online ? 'online, ' : ''}last seen ${at === null ? '' : new Date(at).toLocaleString()}`;
  return activity.online ? (
    <span class={`presence presence-online${compact}`} data-testid="presence" data-presence="online" title={title}>
      <span class="dot" aria-hidden="true" />
      {props.compact === true ? null : 'online'}
    </span>
  ) : (
    <span class={`presence presence-away${compact}`} data-testid="presence" data-presence="away" title={title}>
      <span class="dot" aria-hidden="true" />
      {props.compact === true ? null : `last seen ${when}`}
    </span>
  );
}

/** When something happened, "3 min ago" (a little clock skew reads "just now"), with the exact time in the title. */
export function Time(props: { at: string | null | undefined; now: number; empty?: string }) {
  const ms = parseTime(props.at);
  if (ms === null) return <span class="muted">{props.empty ?? '—'}</span>;
  return (
    <time dateTime={props.at ?? ''} title={new Date(ms).toLocaleString()}>
      {pastTime(ms, props.now)}
    </time>
  );
}

const STATE_TONES: Readonly<Record<string, string>> = {
  active: 'ok',
  running: 'ok',
  completed: 'ok',
  pending: 'wait',
  created: 'wait',
  closing: 'wait',
  closed: 'off',
  expired: 'bad',
  failed: 'bad',
  cancelled: 'off',
  standby: 'off',
};

/** A state as a coloured badge. */
export function Badge(props: { value: string; tone?: string }) {
  return <span class={`badge badge-${props.tone ?? STATE_TONES[props.value] ?? 'off'}`}>{props.value}</span>;
}

/** What an empty list says: what it is and what to do. */
export function Empty(props: { children: ComponentChildren }) {
  return (
    <p class="empty" data-testid="empty">
      {props.children}
    </p>
  );
}

export function Loading() {
  return <p class="muted">Loading…</p>;
}

/** A view's title row, with actions on the right. */
export function ViewHeader(props: { title: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="view-header">
      <h1>{props.title}</h1>
      <div class="actions">{props.children}</div>
    </div>
  );
}

/** Polls `load` every `ms` (and at once), until unmounted or the dependencies change. */
export function usePoll(load: () => Promise<void>, ms: number, deps: readonly unknown[]): void {
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async (): Promise<void> => {
      await load();
      if (!stopped) timer = setTimeout(() => void tick(), ms);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, deps);
}

/**
 * A list filter: a `<select name>` whose first option (value `''`) is "any …"; `options` are values shown as
 * themselves, or `[value, label]` pairs.
 */
export function FilterSelect(props: {
  name: string;
  label: string;
  value: string;
  options: readonly (string | readonly [string, string])[];
  onChange: (value: string) => void;
}) {
  return (
    <select
      name={props.name}
      aria-label={props.label}
      value={props.value}
      onChange={(e) => props.onChange(e.currentTarget.value)}
    >
      <option value="">any {props.label.toLowerCase()}</option>
      {props.options.map((o) => {
        const [value, text] = typeof o === 'string' ? [o, o] : o;
        return (
          <option key={value} value={value}>
            {text}
          </option>
        );
      })}
    </select>
  );
}

/** The agent and channel filters of the tasks and audit lists: agents by name from the directory, a channel by id. */
export function AgentChannelFilters(props: {
  agents: readonly { agent_id: string | null; name: string }[];
  agent: string;
  onAgent: (value: string) => void;
  channel: string;
  onChannel: (value: string) => void;
}) {
  return (
    <>
      <FilterSelect
        name="agent"
        label="Agent"
        value={props.agent}
        options={props.agents.flatMap((a) => (a.agent_id === null ? [] : [[a.agent_id, a.name] as const]))}
        onChange={props.onAgent}
      />
      <input
        name="channel"
        placeholder="Channel id"
        aria-label="Channel id"
        value={props.channel}
        onChange={(e) => props.onChannel(e.currentTarget.value)}
      />
    </>
  );
}
