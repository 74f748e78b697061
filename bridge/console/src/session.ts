import { SessionSchema, type Session } from '../../src/api-schemas.js';

/** Where the signed-in session lives: this tab only, gone when it closes. */
export const SESSION_KEY = 'ag2net.session';

export function loadSession(): Session | null {
  const text = sessionStorage.getItem(SESSION_KEY);
  if (text === null) return null;
  try {
    const parsed = SessionSchema.safeParse(JSON.parse(text));
    if (!parsed.success || Date.parse(parsed.data.expires_at) <= Date.now()) {
      sessionStorage.removeItem(SESSION_KEY);
      return null;
    }
    return parsed.data;
  } catch {
    sessionStorage.removeItem(SESSION_KEY);
    return null;
  }
}

export function saveSession(session: Session): void {
  const { token, name, operator, expires_at } = session;
  sessionStorage.setItem(SESSION_KEY, JSON.stringify({ token, name, operator, expires_at }));
}

export function clearSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
}
