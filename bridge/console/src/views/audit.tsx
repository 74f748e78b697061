import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { AuditKind } from '@ag2net/protocol';
import type { AuditRecord } from '../../../src/api-schemas.js';
import { AgentChannelFilters, Empty, FilterSelect, Loading, Time, useNow, usePoll, ViewHeader } from '../components.js';
import { useConsole } from '../context.js';
import { auditAgents, auditSummary } from '../logic/audit.js';
import { shortId } from '../logic/ids.js';

/** Audit kinds the hub writes (the set is open: kinds seen in the trail are offered too). */
const KNOWN_KINDS = Object.values(AuditKind).sort();
const SHOWN_FIELDS = new Set(['id', 'kind', 'at']);
/** Pages of 500 read per refresh, and the newest records shown of them. */
const MAX_PAGES = 20;
const SHOWN_RECORDS = 500;
/** Fields of a record that name agents (as the hub's audit filter reads them): shown by name. */
const AGENT_FIELDS = new Set(['agent_id', 'creator_id', 'owner_id', 'participants', 'violators']);

/** The audit trail with kind, channel and agent filters (the operator's; people see a note). */
export function AuditView() {
  const { session } = useConsole();
  if (!session.operator) {
    return (
      <section>
        <div class="view-header">
          <h1>Audit</h1>
        </div>
        <Empty>The audit trail is for operators only: sign in as $operator with the operator key to read it.</Empty>
      </section>
    );
  }
  return <AuditTrail />;
}

function AuditTrail() {
  const { api, agents, nameOf, reportError } = useConsole();
  const now = useNow(10_000);
  const [records, setRecords] = useState<readonly AuditRecord[] | null>(null);
  const [kind, setKind] = useState('');
  const [channel, setChannel] = useState('');
  const [agent, setAgent] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [raw, setRaw] = useState(false);
  const [seenKinds, setSeenKinds] = useState<readonly string[]>(KNOWN_KINDS);

  usePoll(
    async () => {
      try {
        // The trail is paged oldest first: read to its end, then show the newest first.
        const all: AuditRecord[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const reply = await api.audit({ kinds: kind, channel_id: channel.trim(), agent_id: agent, cursor });
          all.push(...reply.records);
          if (reply.next_cursor === null) break;
          cursor = reply.next_cursor;
        }
        setRecords(all.slice(-SHOWN_RECORDS).reverse());
        setSeenKinds((known) => [...new Set([...known, ...all.map((r) => r.kind)])].sort());
      } catch (err) {
        reportError(err);
      }
    },
    10_000,
    [api, kind, channel, agent],
  );

  const describe = (key: string, value: unknown): string => {
    if (typeof value === 'string') return AGENT_FIELDS.has(key) ? nameOf(value) : value;
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      return AGENT_FIELDS.has(key) ? value.map((v) => nameOf(v)).join(', ') : value.join(', ');
    }
    return JSON.stringify(value);
  };

  return (
    <section>
      <ViewHeader title="Audit">
        <FilterSelect name="kind" label="Kind" value={kind} options={seenKinds} onChange={setKind} />
        <AgentChannelFilters
          agents={agents}
          agent={agent}
          onAgent={setAgent}
          channel={channel}
          onChannel={setChannel}
        />
        <button type="button" aria-pressed={raw} onClick={() => setRaw((r) => !r)}>
          Raw JSON
        </button>
      </ViewHeader>
      {records === null ? (
        <Loading />
      ) : records.length === 0 ? (
        <Empty>
          No audit records match — the hub writes one when agents register, channels close or rules are broken.
        </Empty>
      ) : (
        <div class="table-scroll">
          <table class="table">
            <thead>
              <tr>
                <th>When</th>
                <th>Kind</th>
                <th>Channel</th>
                <th>Agent</th>
                <th>What</th>
              </tr>
            </thead>
            <tbody>
              {records.map((r) => {
                const channelId = typeof r['channel_id'] === 'string' ? r['channel_id'] : null;
                const who = auditAgents(r, nameOf);
                const summary = auditSummary(r, nameOf);
                const expanded = open === r.id;
                return (
                  <Fragment key={r.id}>
                    <tr
                      data-testid="audit-row"
                      data-kind={r.kind}
                      class={`clickable${r.kind.includes('violat') || r.kind.includes('dead') ? ' row-bad' : ''}`}
                      aria-expanded={expanded}
                      onClick={() => setOpen(expanded ? null : r.id)}
                    >
                      <td>
                        <Time at={r.at} now={now} />
                      </td>
                      <td>
                        <span class="chip">{r.kind}</span>
                      </td>
                      <td>
                        {channelId === null ? (
                          <span class="muted">—</span>
                        ) : (
                          <a class="mono" href={`#/channels/${encodeURIComponent(channelId)}`} title={channelId}>
                            {shortId(channelId)}
                          </a>
                        )}
                      </td>
                      <td>{who === '' ? <span class="muted">—</span> : who}</td>
                      <td class="clamp" title={summary}>
                        {summary === '' ? <span class="muted">—</span> : summary}
                      </td>
                    </tr>
                    {expanded ? (
                      <tr class="details">
                        <td colSpan={5}>
                          {raw ? (
                            <pre class="raw">{JSON.stringify(r, null, 2)}</pre>
                          ) : (
                            <dl class="fields">
                              {Object.entries(r)
                                .filter(([k]) => !SHOWN_FIELDS.has(k))
                                .map(([k, v]) => (
                                  <Fragment key={k}>
                                    <dt>{k}</dt>
                                    <dd>{describe(k, v)}</dd>
                                  </Fragment>
                                ))}
                              <dt>record id</dt>
                              <dd class="mono">{r.id}</dd>
                            </dl>
                          )}
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
