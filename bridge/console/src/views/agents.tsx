import { useEffect, useState } from 'preact/hooks';
import type { Resume } from '@ag2net/protocol';
import { Badge, Empty, Presence, useNow, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { ModelLabel } from './model.js';

/**
 * The agent directory: every registered identity with its kind, its model (the scripted one marked), capabilities and
 * summary.
 */
export function AgentsView() {
  const { api, agents, activity } = useConsole();
  const now = useNow(5000);
  const [resumes, setResumes] = useState<ReadonlyMap<string, Resume>>(new Map());
  const [filter, setFilter] = useState('');
  const [kind, setKind] = useState('');

  useEffect(() => {
    let stopped = false;
    for (const a of agents) {
      const id = a.agent_id;
      if (id === null || resumes.has(id)) continue;
      api.resume(id).then(
        (reply) => {
          if (!stopped) setResumes((m) => new Map(m).set(id, reply.resume));
        },
        () => {},
      );
    }
    return () => {
      stopped = true;
    };
  }, [agents, api]);

  const text = filter.trim().toLowerCase();
  // People sign in through the bridge and appear in the directory as kind `human`: listed apart, below.
  const people = agents.filter((a) => a.kind === 'human');
  const shown = agents
    .filter((a) => a.kind !== 'human')
    .filter((a) => {
      const resume = a.agent_id === null ? undefined : resumes.get(a.agent_id);
      const haystack = [a.name, resume?.summary ?? '', ...(resume?.claimed_capabilities ?? [])].join(' ').toLowerCase();
      return (kind === '' || (a.kind ?? 'agent') === kind) && (text === '' || haystack.includes(text));
    });
  const kinds = [...new Set(agents.filter((a) => a.kind !== 'human').map((a) => a.kind ?? 'agent'))].sort();

  return (
    <section>
      <ViewHeader title="Agents">
        <input
          type="search"
          name="query"
          placeholder="Filter by name or capability"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
        <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)} aria-label="Kind">
          <option value="">any kind</option>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </ViewHeader>
      {agents.length === people.length ? (
        <Empty>No agents registered yet — start agent-runner (npm start does) and they appear here.</Empty>
      ) : shown.length === 0 ? (
        <Empty>No agent matches the filter.</Empty>
      ) : (
        <table class="table stack">
          <thead>
            <tr>
              <th>Name</th>
              <th title="Online: an envelope of it in the last 5 minutes, in channels you can read">Seen</th>
              <th>Kind</th>
              <th title="The model the agent answers with, as its passport names it">Model</th>
              <th>Capabilities</th>
              <th>Description</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((a) => {
              const resume = a.agent_id === null ? undefined : resumes.get(a.agent_id);
              const href = `#/agents/${encodeURIComponent(a.agent_id ?? a.name)}`;
              return (
                <tr key={a.agent_id ?? a.name} data-testid="agent-row" data-agent-name={a.name}>
                  <td>
                    <a href={href}>
                      <strong>{a.name}</strong>
                    </a>
                  </td>
                  <td data-label="Seen">
                    <Presence activity={a.agent_id === null ? undefined : activity.get(a.agent_id)} now={now} />
                  </td>
                  <td data-label="Kind">
                    <Badge value={a.kind ?? 'agent'} tone={a.kind === 'human' ? 'wait' : 'info'} />
                  </td>
                  <td data-label="Model">
                    <ModelLabel provider={a.provider} model={a.model} />
                  </td>
                  <td data-label="Capabilities">
                    {(resume?.claimed_capabilities ?? []).map((c) => (
                      <span key={c} class="chip">
                        {c}
                      </span>
                    ))}
                  </td>
                  <td class="muted clamp" data-label="Description">
                    {resume === undefined || resume.summary === '' ? null : resume.summary}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {people.length === 0 ? null : (
        <>
          <h2 class="section-title">People</h2>
          <p class="chips">
            {people.map((p) => (
              <a
                key={p.agent_id ?? p.name}
                class="chip"
                data-testid="person-row"
                href={`#/agents/${encodeURIComponent(p.agent_id ?? p.name)}`}
              >
                <Presence activity={p.agent_id === null ? undefined : activity.get(p.agent_id)} now={now} compact />
                {p.name}
              </a>
            ))}
          </p>
        </>
      )}
    </section>
  );
}
