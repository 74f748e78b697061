import { useState } from 'preact/hooks';
import { describeError } from '../api.js';
import { ErrorAlert } from '../components.js';
import { useConsole } from '../context.js';
import { navigate } from '../router.js';

/** Channel types a person opens from the form (a workflow needs a graph: agents and the SDK open those). */
const OPENABLE = [
  ['consulting', 'consulting — one question, one answer'],
  ['conversation', 'conversation — free two-party chat'],
  ['discussion', 'discussion — round robin among several'],
] as const;

/** Opens a channel as the person with the agents ticked; answers once every invitee accepted, then shows it. */
export function NewChannelForm(props: { onCancel: () => void }) {
  const { api, agents, myId } = useConsole();
  const [type, setType] = useState('consulting');
  const [targets, setTargets] = useState<readonly string[]>([]);
  const [intent, setIntent] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const others = agents.filter((a) => a.agent_id !== myId);

  const submit = async (): Promise<void> => {
    if (targets.length === 0) {
      setError({ code: 'invalid_request', message: 'tick at least one agent to invite' });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const trimmed = intent.trim();
      const reply = await api.openChannel({
        type,
        target: [...targets],
        ...(trimmed === '' ? {} : { intent: trimmed }),
      });
      navigate(`#/channels/${encodeURIComponent(reply.channel.channel_id)}`);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  return (
    <form
      class="card new-channel"
      data-testid="new-channel"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h2>New channel</h2>
      <label>
        Type
        <select name="type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          {OPENABLE.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>Invite</legend>
        {others.length === 0 ? (
          <p class="muted">No agents to invite yet.</p>
        ) : (
          <div class="checks">
            {others.map((a) => (
              <label key={a.name} class="check">
                <input
                  type="checkbox"
                  name="target"
                  value={a.name}
                  checked={targets.includes(a.name)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    setTargets((t) => (on ? [...t, a.name] : t.filter((n) => n !== a.name)));
                  }}
                />
                {a.name}
                {a.kind === 'human' ? <span class="muted"> (person)</span> : null}
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <label>
        Intent <span class="muted">(optional: what the channel is for)</span>
        <input name="intent" value={intent} maxLength={1024} onInput={(e) => setIntent(e.currentTarget.value)} />
      </label>
      <ErrorAlert error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Open
        </button>
        <button type="button" onClick={props.onCancel} disabled={busy}>
          Cancel
        </button>
        {busy ? <span class="muted">Waiting for the invitees to accept…</span> : null}
      </div>
    </form>
  );
}
