import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Api, describeError, setUnauthorizedHandler } from './api.js';
import type { Passport, Session } from './api-types.js';
import { ErrorAlert } from './components.js';
import { ConsoleContext, type Console } from './context.js';
import { nameIds, shortId } from './logic/ids.js';
import { navigate, useRoute, type Route } from './router.js';
import { clearSession, loadSession, saveSession } from './session.js';
import { AgentView } from './views/agent.js';
import { AgentsView } from './views/agents.js';
import { AuditView } from './views/audit.js';
import { ChannelView } from './views/channel.js';
import { ChannelsView } from './views/channels.js';
import { HubView } from './views/hub.js';
import { SignIn } from './views/signin.js';
import { TasksView } from './views/tasks.js';

const NAV = [
  ['agents', 'Agents'],
  ['channels', 'Channels'],
  ['tasks', 'Tasks'],
  ['audit', 'Audit'],
  ['hub', 'Hub'],
] as const;

/** The operator's sign-in name, shown as `operator`. */
const OPERATOR = '$operator';

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [notice, setNotice] = useState<string | null>(null);

  const signOut = useCallback((why: string | null) => {
    clearSession();
    setSession(null);
    setNotice(why);
    navigate('#/signin');
  }, []);
  useEffect(() => setUnauthorizedHandler(() => signOut('Your session ended: sign in again.')), [signOut]);

  if (session === null || route.parts[0] === 'signin') {
    return (
      <>
        {notice === null ? null : <p class="notice">{notice}</p>}
        <SignIn
          route={route}
          onSignedIn={(s) => {
            saveSession(s);
            setNotice(null);
            setSession(s);
          }}
        />
      </>
    );
  }
  return <Shell session={session} route={route} onSignOut={() => signOut(null)} />;
}

function Shell(props: { session: Session; route: Route; onSignOut: () => void }) {
  const { session, route } = props;
  const api = useMemo(() => new Api(session.token), [session.token]);
  const [myId, setMyId] = useState<string | null>(null);
  const [agents, setAgents] = useState<readonly Passport[]>([]);
  const [extra, setExtra] = useState<ReadonlyMap<string, string>>(new Map());
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const asked = useRef(new Set<string>());

  const known = useRef<ReadonlyMap<string, string>>(new Map());
  // The hub's messages name agents by id: the alert names the ones the directory knows.
  const reportError = useCallback((err: unknown) => {
    if (err === null) return setError(null);
    const { code, message } = describeError(err);
    setError({ code, message: nameIds(message, (id) => known.current.get(id) ?? null) });
  }, []);
  useEffect(() => {
    api.me().then((me) => setMyId(me.agent_id), reportError);
    const load = (): void => {
      api.agents().then((page) => setAgents(page.agents), reportError);
    };
    load();
    // The directory changes as agents come and go; names of new ones are learnt on demand in between.
    const timer = setInterval(load, 30_000);
    return () => clearInterval(timer);
  }, [api, reportError]);

  const byId = useMemo(() => {
    const map = new Map<string, string>(extra);
    for (const a of agents) if (a.agent_id !== null) map.set(a.agent_id, a.name);
    return map;
  }, [agents, extra]);

  known.current = byId;
  const learn = useCallback(
    (ids: readonly string[]) => {
      for (const id of ids) {
        if (known.current.has(id) || asked.current.has(id) || id === OPERATOR) continue;
        asked.current.add(id);
        api.agent(id).then(
          (reply) => setExtra((m) => new Map(m).set(id, reply.passport.name)),
          () => {},
        );
      }
    },
    [api],
  );
  const value: Console = useMemo(
    () => ({
      api,
      session,
      myId,
      agents,
      nameOf: (id: string) => (id === OPERATOR ? 'operator' : (byId.get(id) ?? shortId(id))),
      knownName: (id: string) => (id === OPERATOR ? 'operator' : (byId.get(id) ?? null)),
      learn,
      reportError,
    }),
    [api, session, myId, agents, byId, learn, reportError],
  );

  const section = route.parts[0] ?? 'channels';
  const id = route.parts[1];
  // A failure belongs to the view it happened on.
  useEffect(() => setError(null), [section, id]);
  return (
    <ConsoleContext.Provider value={value}>
      <div class="shell">
        <nav class="sidebar" aria-label="Main">
          <a class="brand" href="#/channels">
            ag2net
          </a>
          {NAV.map(([key, label]) => (
            <a key={key} href={`#/${key}`} class={section === key ? 'active' : ''}>
              {label}
            </a>
          ))}
        </nav>
        <div class="main">
          <header class="topbar">
            <span class="muted">Signed in as</span>
            <strong data-testid="whoami">{session.name === OPERATOR ? 'operator' : session.name}</strong>
            <button type="button" onClick={props.onSignOut}>
              Sign out
            </button>
          </header>
          <ErrorAlert error={error} onDismiss={() => setError(null)} />
          <main class="content" key={`${section}/${id ?? ''}`}>
            {view(section, id)}
          </main>
        </div>
      </div>
    </ConsoleContext.Provider>
  );
}

function view(section: string, id: string | undefined) {
  switch (section) {
    case 'agents':
      return id === undefined ? <AgentsView /> : <AgentView agentId={id} />;
    case 'channels':
      return id === undefined ? <ChannelsView /> : <ChannelView channelId={id} />;
    case 'tasks':
      return <TasksView />;
    case 'audit':
      return <AuditView />;
    case 'hub':
      return <HubView />;
    default:
      return <ChannelsView />;
  }
}
