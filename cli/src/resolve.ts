import type { HubClient } from '@ag2net/client';
import { ErrorCode, NotFoundError, participantIds, type HubResponse, type Passport } from '@ag2net/protocol';
import { listChannelPages } from './channel-pages.js';
import { CliError } from './exit.js';

/** The most candidates the refusal of an ambiguous prefix lists. */
export const MAX_CANDIDATES = 10;

/** The hub's largest page of a list operation. */
const PAGE = 1000;

/** A whole ULID, as the hub mints ids: taken as it is, with no listing. */
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** What an id may be abbreviated to: the characters of ids. */
const ID_PREFIX = /^[A-Za-z0-9_-]+$/;

/** The hub operations the resolvers use. */
type Hub = Pick<HubClient, 'call' | 'getAgent' | 'partitions'>;

/** One id a prefix may stand for, and how the refusal of an ambiguous prefix shows it. */
interface Candidate {
  readonly id: string;
  readonly label: () => Promise<string> | string;
}

/**
 * The channel a command line names: a whole id as it is (the hub answers for it), else the one channel the caller
 * may see whose id starts with `arg` (in any case). No such channel: not found (exit 3); several: a usage error
 * listing them (exit 2).
 */
export async function resolveChannelId(
  hub: Hub,
  arg: string,
  options: {
    readonly caller: string;
    /** Names of agent ids, for the candidates of an ambiguous prefix. */
    readonly names?: { names(agentIds: readonly string[]): Promise<string[]> };
  },
): Promise<string> {
  if (ULID.test(arg)) return arg;
  const channels = await listChannelPages(hub, { agent_id: null, state: null }, { caller: options.caller });
  return pick(
    { kind: 'channel', list: 'ag2net channels ls' },
    arg,
    channels.map((c) => ({
      id: c.channel_id,
      label: async () => {
        const who = options.names === undefined ? participantIds(c) : await options.names.names(participantIds(c));
        return `${c.manifest.type} ${c.state} ${who.join(', ')}`.trimEnd();
      },
    })),
  );
}

/** The task a command line names, as `resolveChannelId` finds a channel, among the tasks the caller may see. */
export async function resolveTaskId(hub: Hub, arg: string, options: { readonly caller: string }): Promise<string> {
  if (ULID.test(arg)) return arg;
  const tasks: HubResponse<'listTasks'>['tasks'] = [];
  let cursor: string | null = null;
  do {
    const page: HubResponse<'listTasks'> = await hub.call(
      'listTasks',
      { agent_id: null, channel_id: null, state: null, limit: PAGE, cursor },
      { caller: options.caller },
    );
    tasks.push(...page.tasks);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return pick(
    { kind: 'task', list: 'ag2net tasks ls' },
    arg,
    tasks.map((t) => ({ id: t.task_id, label: () => t.state })),
  );
}

/**
 * The passport of the agent a command line names: by name or id as the hub finds it (public `getAgent`), else the
 * one registered agent whose id starts with `arg`. Nobody: the hub's `not_found` (exit 3); several: a usage error
 * listing them (exit 2).
 */
export async function resolveAgent(hub: Hub, arg: string): Promise<Passport> {
  try {
    return await hub.getAgent(arg);
  } catch (err) {
    if (!(err instanceof NotFoundError) || !ID_PREFIX.test(arg) || ULID.test(arg)) throw err;
    const agents: Passport[] = [];
    let cursor: string | null = null;
    do {
      const page: HubResponse<'listAgents'> = await hub.call('listAgents', { limit: PAGE, cursor });
      agents.push(...page.agents);
      cursor = page.next_cursor;
    } while (cursor !== null);
    const ids = new Map(agents.flatMap((p) => (p.agent_id === null ? [] : [[p.agent_id, p] as const])));
    let id: string;
    try {
      id = await pick(
        { kind: 'agent', list: 'ag2net agents ls' },
        arg,
        [...ids.values()].map((p) => ({ id: p.agent_id ?? '', label: () => p.name })),
      );
    } catch (refusal) {
      // Nobody's id starts so either: the hub's own answer, naming what it was asked for.
      if (refusal instanceof CliError && refusal.code === ErrorCode.NotFound) throw err;
      throw refusal;
    }
    const passport = ids.get(id);
    if (passport === undefined) throw err;
    return passport;
  }
}

async function pick(
  what: { readonly kind: string; readonly list: string },
  arg: string,
  candidates: readonly Candidate[],
): Promise<string> {
  const exact = candidates.find((c) => c.id === arg);
  if (exact !== undefined) return exact.id;
  const wanted = arg.toUpperCase();
  const matches = candidates.filter((c) => c.id.toUpperCase().startsWith(wanted));
  const [only] = matches;
  if (matches.length === 1 && only !== undefined) return only.id;
  if (matches.length === 0) {
    throw new CliError(`${what.kind} not found: ${arg}`, ErrorCode.NotFound, {
      hint: `no ${what.kind} the caller may see has an id that starts with ${arg}: \`${what.list}\` lists them`,
    });
  }
  const shown = await Promise.all(matches.slice(0, MAX_CANDIDATES).map(async (c) => `  ${c.id}  ${await c.label()}`));
  const more = matches.length > MAX_CANDIDATES ? [`  … and ${matches.length - MAX_CANDIDATES} more`] : [];
  throw new CliError(
    [`${arg} is ambiguous: ${matches.length} ${what.kind}s have an id that starts with it:`, ...shown, ...more].join(
      '\n',
    ),
    ErrorCode.InvalidRequest,
    { hint: `give more of the ${what.kind} id` },
  );
}
