import { useState } from 'preact/hooks';
import { TaskState, type TaskMetadata } from '@ag2net/protocol';
import {
  AgentChannelFilters,
  Badge,
  Empty,
  FilterSelect,
  Loading,
  Time,
  useNow,
  usePoll,
  ViewHeader,
} from '../components.js';
import { useConsole } from '../context.js';

const STATES = Object.values(TaskState);

/** The tasks the caller may see (owned, or of their channels; every task for the operator), with filters. */
export function TasksView() {
  const { api, agents, myId, nameOf, learn, reportError } = useConsole();
  const now = useNow(10_000);
  const [tasks, setTasks] = useState<readonly TaskMetadata[] | null>(null);
  const [state, setState] = useState('');
  const [agent, setAgent] = useState('');
  const [channel, setChannel] = useState('');

  usePoll(
    async () => {
      try {
        const page = await api.tasks({ state, agent_id: agent, channel_id: channel.trim() });
        setTasks(page.tasks);
        learn(page.tasks.map((t) => t.owner_id));
      } catch (err) {
        reportError(err);
      }
    },
    5000,
    [api, state, agent, channel],
  );

  return (
    <section>
      <ViewHeader title="Tasks">
        <FilterSelect name="state" label="State" value={state} options={STATES} onChange={setState} />
        <AgentChannelFilters
          agents={agents}
          agent={agent}
          onAgent={setAgent}
          channel={channel}
          onChannel={setChannel}
        />
      </ViewHeader>
      {tasks === null ? (
        <Loading />
      ) : tasks.length === 0 ? (
        <Empty>
          {state !== '' || agent !== '' || channel !== ''
            ? 'No task matches these filters.'
            : 'No tasks yet — agents create them when they take on work.'}
        </Empty>
      ) : (
        <div class="table-scroll">
          <table class="table">
            <thead>
              <tr>
                <th>Task</th>
                <th>State</th>
                <th>Owner</th>
                <th>Channel</th>
                <th>Created</th>
                <th>Completed</th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((t) => (
                <tr key={t.task_id} data-testid="task-row" data-state={t.state}>
                  <td>
                    <strong>{t.spec.title || t.task_id}</strong>
                    {t.spec.objective === '' ? null : <div class="muted clamp">{t.spec.objective}</div>}
                    {t.error === null ? null : <div class="text-bad">{t.error}</div>}
                  </td>
                  <td>
                    <Badge value={t.state} />
                  </td>
                  <td>{t.owner_id === myId ? 'you' : nameOf(t.owner_id)}</td>
                  <td>
                    {t.channel_id === null ? (
                      <span class="muted">—</span>
                    ) : (
                      <a class="mono" href={`#/channels/${encodeURIComponent(t.channel_id)}`}>
                        {t.channel_id.slice(0, 8)}
                      </a>
                    )}
                  </td>
                  <td>
                    <Time at={t.created_at} now={now} />
                  </td>
                  <td>
                    <Time at={t.completed_at} now={now} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
