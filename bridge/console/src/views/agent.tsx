import MarkdownIt from 'markdown-it';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeError } from '../api.js';
import type { Passport, Resume } from '@ag2net/protocol';
import { Badge, ErrorAlert, Loading, Presence, Time, useNow, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { ModelLabel } from './model.js';

/** Raw HTML in a SKILL.md stays text: the markdown is the agent's, and nothing it says may run in the console. */
const markdown = new MarkdownIt({ html: false, linkify: true });

/**
 * One agent: its passport (with the model it answers with, the scripted model marked), what it claims and what the hub
 * observed it do, and its SKILL.md.
 */
export function AgentView(props: { agentId: string }) {
  const { api, activity } = useConsole();
  const now = useNow(5000);
  const [passport, setPassport] = useState<Passport | null>(null);
  const [resume, setResume] = useState<Resume | null>(null);
  const [skill, setSkill] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<{ code: string; message: string } | null>(null);

  useEffect(() => {
    let stopped = false;
    const fail = (err: unknown): void => {
      if (!stopped) setError(describeError(err));
    };
    api.agent(props.agentId).then((reply) => {
      if (stopped) return;
      setPassport(reply.passport);
      const id = reply.passport.agent_id;
      if (id === null) return;
      api.resume(id).then((r) => !stopped && setResume(r.resume), fail);
      api.skill(id).then((s) => !stopped && setSkill(s.skill_md), fail);
    }, fail);
    return () => {
      stopped = true;
    };
  }, [api, props.agentId]);

  const skillHtml = useMemo(() => (typeof skill === 'string' ? markdown.render(skill) : ''), [skill]);

  if (passport === null) return error === null ? <Loading /> : <ErrorAlert error={error} />;
  const seen = passport.agent_id === null ? undefined : activity.get(passport.agent_id);
  const capabilities = resume?.claimed_capabilities ?? [];
  const observed = Object.entries(resume?.observed ?? {});
  return (
    <section>
      <p class="crumbs">
        <a href="#/agents">Agents</a> /
      </p>
      <ViewHeader
        title={
          <>
            <span data-testid="agent-name">{passport.name}</span> <Badge value={passport.kind ?? 'agent'} tone="info" />
          </>
        }
      />
      <ErrorAlert error={error} />
      <div class="grid-2">
        <div class="card">
          <h2>Passport</h2>
          <dl class="fields">
            <dt>Agent id</dt>
            <dd class="mono">{passport.agent_id ?? '—'}</dd>
            <dt>Owner</dt>
            <dd>{passport.owner || '—'}</dd>
            <dt>Model</dt>
            <dd data-testid="agent-model">
              <ModelLabel provider={passport.provider} model={passport.model} />
            </dd>
            <dt>Region</dt>
            <dd>{passport.region ?? '—'}</dd>
            <dt>Hub</dt>
            <dd class="mono">{passport.hub_id ?? '—'}</dd>
            <dt>Registered</dt>
            <dd>
              <Time at={passport.created_at} now={now} />
            </dd>
            <dt>Seen</dt>
            <dd>
              <Presence activity={seen} now={now} />
              {seen === undefined ? null : (
                <>
                  {' '}
                  <a class="small" href={`#/channels/${encodeURIComponent(seen.channel_id)}`}>
                    in this channel
                  </a>
                </>
              )}
            </dd>
          </dl>
          <h3>Capabilities</h3>
          <div data-testid="capabilities">
            {/* The claims are the resume's: until it loaded, nothing is known either way. */}
            {resume === null ? (
              error === null ? (
                <Loading />
              ) : (
                <span class="muted">Not known: the resume did not load.</span>
              )
            ) : capabilities.length === 0 ? (
              <span class="muted">None claimed.</span>
            ) : (
              capabilities.map((c) => (
                <span key={c} class="chip">
                  {c}
                </span>
              ))
            )}
          </div>
        </div>
        <div class="card" data-testid="resume">
          <h2>Track record</h2>
          {resume === null ? (
            <Loading />
          ) : (
            <>
              {resume.summary === '' ? null : <p>{resume.summary}</p>}
              {resume.domains.length === 0 ? null : (
                <p>
                  <span class="muted">Domains: </span>
                  {resume.domains.join(', ')}
                </p>
              )}
              {observed.length === 0 ? (
                <p class="muted">The hub has observed no tasks of this agent yet.</p>
              ) : (
                <div class="table-scroll">
                  <table class="table compact">
                    <thead>
                      <tr>
                        <th>Capability</th>
                        <th>Tasks</th>
                        <th>Completed</th>
                        <th>Failed</th>
                        <th>Expired</th>
                        <th>p50 latency</th>
                      </tr>
                    </thead>
                    <tbody>
                      {observed.map(([cap, stat]) => (
                        <tr key={cap}>
                          <td>{cap}</td>
                          <td>{stat.n}</td>
                          <td>{stat.completed}</td>
                          <td>{stat.failed}</td>
                          <td>{stat.expired}</td>
                          <td>{stat.p50_latency_ms === null ? '—' : `${Math.round(stat.p50_latency_ms)} ms`}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              {resume.examples.length === 0 ? null : (
                <>
                  <h3>Examples</h3>
                  <ul>
                    {resume.examples.map((ex, i) => (
                      <li key={i}>
                        <strong>{ex.title}</strong>
                        {ex.outcome === '' ? '' : ` — ${ex.outcome}`}
                        {ex.note === '' ? '' : <span class="muted"> ({ex.note})</span>}
                      </li>
                    ))}
                  </ul>
                </>
              )}
            </>
          )}
        </div>
      </div>
      <div class="card">
        <h2>SKILL.md</h2>
        {skill === undefined ? (
          <Loading />
        ) : skill === null ? (
          <div class="markdown" data-testid="skill">
            <p class="muted">This agent has published no SKILL.md.</p>
          </div>
        ) : (
          // markdown-it with html: false escapes every tag of the source; only its own markup is produced.
          <div class="markdown" data-testid="skill" dangerouslySetInnerHTML={{ __html: skillHtml }} />
        )}
      </div>
    </section>
  );
}
