import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Api, describeError, setUnauthorizedHandler } from './api.js';
import type { Passport } from '@ag2net/protocol';
import type { AgentActivity, Session } from '../../src/api-schemas.js';
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

/** The nav links: `operator` ones only for the operator (people cannot read the audit trail). */
const NAV = [
  { key: 'agents', label: 'Agents', operator: false },
  { key: 'channels', label: 'Channels', operator: false },
  { key: 'tasks', label: 'Tasks', operator: false },
  { key: 'audit', label: 'Audit', operator: true },
  { key: 'hub', label: 'Hub', operator: false },
] as const;

/** How often the agents' activity (online, last seen) is read again, in ms. */
const ACTIVITY_EVERY_MS = 30_000;
/** How long after a view asks for the activity it is read (the asks of a burst of envelopes read it once), in ms. */
const ACTIVITY_SETTLE_MS = 2000;

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
  const [activity, setActivity] = useState<ReadonlyMap<string, AgentActivity>>(new Map());
  const [activityAsked, setActivityAsked] = useState(0);
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

  // Who was seen when: read now, every 30 s, and when a view asks (say, after an agent answered it).
  useEffect(() => {
    let stopped = false;
    const load = (): void => {
      api.activity().then(
        (reply) => {
          if (!stopped) setActivity(new Map(reply.agents.map((a) => [a.agent_id, a])));
        },
        () => {},
      );
    };
    load();
    const timer = setInterval(load, ACTIVITY_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [api, activityAsked]);
  // Views ask on every envelope; reading once two seconds after the first ask serves a burst of them.
  const activityTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (activityTimer.current !== null) clearTimeout(activityTimer.current);
    },
    [],
  );
  const refreshActivity = useCallback(() => {
    if (activityTimer.current !== null) return;
    activityTimer.current = setTimeout(() => {
      activityTimer.current = null;
      setActivityAsked((n) => n + 1);
    }, ACTIVITY_SETTLE_MS);
  }, []);

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
      activity,
      refreshActivity,
      reportError,
    }),
    [api, session, myId, agents, byId, learn, activity, refreshActivity, reportError],
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
          <div class="nav-links">
            {NAV.filter((n) => session.operator || !n.operator).map((n) => (
              <a
                key={n.key}
                data-testid="nav-link"
                href={`#/${n.key}`}
                class={section === n.key ? 'active' : ''}
                aria-current={section === n.key ? 'page' : undefined}
              >
                {n.label}
              </a>
            ))}
          </div>
        </nav>
        <div class="main">
          <header class="topbar">
            <span class="muted signed-in-as">Signed in as</span>
            <strong data-testid="whoami">{session.name === OPERATOR ? 'operator' : session.name}</strong>
            <button type="button" onClick={props.onSignOut}>
              Sign out
            </button>
          </header>
          <ErrorAlert error={error} onDismiss={() => setError(null)} />
          {/* A channel page fills the window: its transcript scrolls between the header and the composer. */}
          <main
            class={`content${section === 'channels' && id !== undefined ? ' content-fill' : ''}`}
            key={`${section}/${id ?? ''}`}
          >
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
