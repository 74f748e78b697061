import { useEffect, useState } from 'preact/hooks';
import { Api, describeError } from '../api.js';
import type { Session } from '../../../src/api-schemas.js';
import { ErrorAlert } from '../components.js';
import { replaceRoute, type Route } from '../router.js';

/**
 * The sign-in form: a name and an API key (the operator: `$operator` and the operator key). A link
 * `#/signin?name=<n>&key=<k>` signs in at once; its key is dropped from the address bar and history first.
 */
export function SignIn(props: { route: Route; onSignedIn: (session: Session) => void }) {
  const [name, setName] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ code: string; message: string } | null>(null);

  const submit = async (who: string, key: string): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const session = await Api.signIn(who, key);
      props.onSignedIn(session);
      replaceRoute('#/channels');
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const linkName = props.route.params.get('name');
  const linkKey = props.route.params.get('key');
  useEffect(() => {
    if (linkName === null || linkKey === null) return;
    replaceRoute('#/signin');
    setName(linkName);
    void submit(linkName, linkKey);
    // Runs for a link once: the route is replaced at once, so these are null on the next render.
  }, [linkName, linkKey]);

  return (
    <div class="signin-page">
      <form
        class="card signin"
        data-testid="signin"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(name.trim(), apiKey);
        }}
      >
        <h1>ag2net console</h1>
        <p class="muted">Sign in with your name and API key. Operators sign in as $operator with the operator key.</p>
        <label>
          Name
          <input
            name="name"
            autocomplete="username"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          API key
          <input
            name="api_key"
            type="password"
            autocomplete="current-password"
            required
            value={apiKey}
            onInput={(e) => setApiKey(e.currentTarget.value)}
          />
        </label>
        <ErrorAlert error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}
