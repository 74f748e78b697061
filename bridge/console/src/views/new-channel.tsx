import { useMemo, useState } from 'preact/hooks';
import { describeError } from '../api.js';
import { CONSULTING_TYPE, CONVERSATION_TYPE, DISCUSSION_TYPE, WORKFLOW_TYPE } from '@ag2net/adapters';
import { ChannelState } from '@ag2net/protocol';
import { ErrorAlert } from '../components.js';
import { useConsole } from '../context.js';
import { checkGraph, type GraphCheck } from '../logic/graph-check.js';
import { WORKFLOW_TEMPLATES, templateTargets, type WorkflowTemplate } from '../logic/workflow-templates.js';
import { navigate } from '../router.js';
import { WorkflowGraph } from './workflow-graph.js';

/** Every channel type a person can open, with what it is for. */
const TYPES = [
  [CONSULTING_TYPE, 'consulting — one question, one answer'],
  [CONVERSATION_TYPE, 'conversation — free two-party chat'],
  [DISCUSSION_TYPE, 'discussion — round robin among several'],
  [WORKFLOW_TYPE, 'workflow — turns routed by a transition graph'],
] as const;

/** TTLs offered; `''` is the hub's default (2 h). */
const TTLS = [
  ['', 'default (2 h)'],
  ['10m', '10 minutes'],
  ['1h', '1 hour'],
  ['1d', '1 day'],
] as const;

const FIRST_TEMPLATE: WorkflowTemplate | undefined = WORKFLOW_TEMPLATES[0];

/** An example for the graph box: AG2's `TransitionGraph.to_dict()`, speakers by name. */
const GRAPH_EXAMPLE = JSON.stringify(
  {
    initial_speaker: 'you',
    transitions: [
      {
        when: { name: 'from_speaker', args: { agent_id: 'you' } },
        then: { name: 'agent', args: { agent_id: 'triage' } },
      },
    ],
    default_target: { name: 'terminate', args: { reason: 'done' } },
    max_turns: 4,
  },
  null,
  2,
);

/**
 * Opens a channel of any type as the person; answers once every invitee accepted, then shows it. A workflow's graph
 * comes from a template (its agents picked per slot) or is pasted as JSON (`TransitionGraph.to_dict()`, speakers
 * by name or id), checked before it is sent and drawn as the channel page will draw it.
 */
export function NewChannelForm(props: { onCancel: () => void }) {
  const { api, agents, myId, session, nameOf } = useConsole();
  const [type, setType] = useState('consulting');
  const [targets, setTargets] = useState<readonly string[]>([]);
  const [intent, setIntent] = useState('');
  const [ttl, setTtl] = useState('');
  const [source, setSource] = useState<'template' | 'json'>('template');
  const [templateId, setTemplateId] = useState(FIRST_TEMPLATE?.id ?? '');
  const [slots, setSlots] = useState<Readonly<Record<string, string>>>({});
  const [json, setJson] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const others = agents.filter((a) => a.agent_id !== myId && a.agent_id !== null);
  const idOfName = useMemo(() => new Map(others.map((a) => [a.name, a.agent_id ?? ''])), [others]);
  const template = WORKFLOW_TEMPLATES.find((t) => t.id === templateId) ?? FIRST_TEMPLATE;

  // A template's slot holds an agent name: what was picked, else the agent the template suggests when it exists.
  const slotName = (key: string, suggested: string): string => slots[key] ?? (idOfName.has(suggested) ? suggested : '');
  const slotNames = (t: WorkflowTemplate): Record<string, string> =>
    Object.fromEntries(t.slots.map((s) => [s.key, slotName(s.key, s.suggested)]));

  const resolve = (nameOrId: string): string | null => {
    if (nameOrId === 'you' || nameOrId === session.name) return myId;
    const byName = idOfName.get(nameOrId);
    if (byName !== undefined) return byName;
    return nameOrId === myId || others.some((a) => a.agent_id === nameOrId) ? nameOrId : null;
  };

  /** The workflow's invitees (names) and its checked graph. */
  const workflow = ((): { invitees: readonly string[]; check: GraphCheck } | null => {
    if (type !== WORKFLOW_TYPE || myId === null || template === undefined) return null;
    if (source === 'template') {
      const names = slotNames(template);
      const missing = template.slots.filter((s) => (names[s.key] ?? '') === '').map((s) => s.label.toLowerCase());
      const ids = Object.fromEntries(Object.entries(names).map(([k, n]) => [k, idOfName.get(n) ?? '']));
      const invitees = templateTargets(template, names);
      if (missing.length > 0)
        return { invitees, check: { ok: false, problems: [`pick the ${missing.join(' and the ')}`] } };
      const participants = [myId, ...templateTargets(template, ids)];
      return {
        invitees,
        check: checkGraph(template.graph({ me: myId, slots: ids }), { resolve, participants, nameOf }),
      };
    }
    if (json.trim() === '') return { invitees: targets, check: { ok: false, problems: ['paste a graph'] } };
    const participants = [myId, ...targets.map((n) => idOfName.get(n) ?? n)];
    return { invitees: targets, check: checkGraph(json, { resolve, participants, nameOf }) };
  })();

  const editAsJson = (): void => {
    if (template === undefined) return;
    // Speakers by name: the box reads names, and a person can read them.
    setJson(JSON.stringify(template.graph({ me: 'you', slots: slotNames(template) }), null, 2));
    setTargets(templateTargets(template, slotNames(template)));
    setSource('json');
  };

  const submit = async (): Promise<void> => {
    const invitees = workflow?.invitees ?? targets;
    if (invitees.length === 0) {
      setError({ code: 'invalid_request', message: 'tick at least one agent to invite' });
      return;
    }
    if (workflow !== null && !workflow.check.ok) {
      setError({ code: 'invalid_request', message: `the graph is not valid: ${workflow.check.problems.join('; ')}` });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const trimmed = intent.trim();
      const reply = await api.openChannel({
        type,
        target: [...invitees],
        ...(trimmed === '' ? {} : { intent: trimmed }),
        ...(ttl === '' ? {} : { ttl }),
        ...(workflow?.check.ok === true ? { knobs: { graph: workflow.check.graph } } : {}),
      });
      navigate(`#/channels/${encodeURIComponent(reply.channel.channel_id)}`);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  const preview: Parameters<typeof WorkflowGraph>[0]['channel'] | null =
    workflow?.check.ok === true && myId !== null
      ? {
          creator_id: myId,
          participants: [myId, ...workflow.invitees.map((n) => idOfName.get(n) ?? n)].map((agentId, order) => ({
            agent_id: agentId,
            order,
          })),
          state: ChannelState.Pending,
          knobs: { graph: workflow.check.graph },
        }
      : null;

  const inviteBoxes = (
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
  );

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
      <div class="form-row">
        <label>
          Type
          <select name="type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {TYPES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          TTL
          <select name="ttl" value={ttl} onChange={(e) => setTtl(e.currentTarget.value)}>
            {TTLS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {type !== WORKFLOW_TYPE ? (
        inviteBoxes
      ) : (
        <fieldset class="workflow-source" data-testid="workflow-source">
          <legend>Transition graph</legend>
          <div class="checks">
            <label class="check">
              <input
                type="radio"
                name="graph-source"
                value="template"
                checked={source === 'template'}
                onChange={() => setSource('template')}
              />
              From a template
            </label>
            <label class="check">
              <input
                type="radio"
                name="graph-source"
                value="json"
                checked={source === 'json'}
                onChange={() => setSource('json')}
              />
              Paste JSON (TransitionGraph.to_dict())
            </label>
          </div>
          {source === 'template' && template !== undefined ? (
            <>
              <label>
                Template
                <select name="template" value={template.id} onChange={(e) => setTemplateId(e.currentTarget.value)}>
                  {WORKFLOW_TEMPLATES.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.title}
                    </option>
                  ))}
                </select>
              </label>
              <p class="muted small">{template.summary}</p>
              <div class="form-row">
                {template.slots.map((s) => (
                  <label key={s.key}>
                    {s.label}
                    <select
                      name={`slot-${s.key}`}
                      value={slotName(s.key, s.suggested)}
                      onChange={(e) => {
                        const value = e.currentTarget.value;
                        setSlots((m) => ({ ...m, [s.key]: value }));
                      }}
                    >
                      <option value="">pick an agent</option>
                      {others.map((a) => (
                        <option key={a.name} value={a.name}>
                          {a.name}
                        </option>
                      ))}
                    </select>
                  </label>
                ))}
              </div>
              <div>
                <button type="button" class="link" onClick={editAsJson}>
                  Edit as JSON
                </button>
              </div>
            </>
          ) : (
            <>
              {inviteBoxes}
              <label>
                Graph <span class="muted">(speakers by name, “you”, or agent id)</span>
                <textarea
                  name="graph"
                  class="mono"
                  rows={10}
                  spellcheck={false}
                  placeholder={GRAPH_EXAMPLE}
                  value={json}
                  onInput={(e) => setJson(e.currentTarget.value)}
                />
              </label>
            </>
          )}
          {workflow === null || workflow.check.ok ? null : (
            <ul class="graph-problems" data-testid="graph-problems">
              {workflow.check.problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          )}
          {preview === null ? null : (
            <div data-testid="graph-preview" class="graph-preview">
              <WorkflowGraph channel={preview} next={null} envelopes={[]} myId={myId} nameOf={nameOf} />
            </div>
          )}
        </fieldset>
      )}
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
