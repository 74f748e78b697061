import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api.js';
import type { Passport } from '@ag2net/protocol';
import type { AgentActivity, Session } from '../../src/api-schemas.js';

/** What every view of a signed-in console reads: the API as the person, who they are, names, the error alert. */
export interface Console {
  readonly api: Api;
  readonly session: Session;
  /** The person's agent id; `null` for the operator (and until `/v1/me` answered). */
  readonly myId: string | null;
  /** Every passport of the directory, by name. */
  readonly agents: readonly Passport[];
  /** The directory's name for an id (never `you`: callers decide that); an unknown id shows shortened. */
  readonly nameOf: (id: string) => string;
  /** The directory's name for an id, `null` when it does not know the id. */
  readonly knownName: (id: string) => string | null;
  /** Looks up ids the directory did not list (say, an agent that registered since). */
  readonly learn: (ids: readonly string[]) => void;
  /** When each agent was last seen, by agent id (`GET /v1/activity`, read every 30 s); an agent not seen is absent. */
  readonly activity: ReadonlyMap<string, AgentActivity>;
  /** Reads the activity again now (say, after an agent answered). */
  readonly refreshActivity: () => void;
  /** Shows a failure in the error alert (`null` clears it). */
  readonly reportError: (err: unknown) => void;
}

export const ConsoleContext = createContext<Console | null>(null);

export function useConsole(): Console {
  const value = useContext(ConsoleContext);
  if (value === null) throw new Error('useConsole outside a signed-in console');
  return value;
}
