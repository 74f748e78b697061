import type { Channel } from '@ag2net/client';
import { repr } from '@ag2net/protocol/internal';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE_REJECT,
  EV_TEXT,
  type Envelope,
  type Passport,
} from '@ag2net/protocol';
import type { ToolClient, ToolContext } from './context.js';
import { message, pyFloat } from './format.js';

/** How long `delegate` waits for the reply by default, in seconds. */
export const DEFAULT_DELEGATE_TIMEOUT_S = 300;

/** Arguments of `delegate`. */
export interface DelegateArgs {
  /** The peer's name (or agent id). */
  readonly target: string;
  readonly prompt: string;
  /** Recorded as the channel knob `capability`. */
  readonly capability?: string | null;
  /** Seconds to wait for the reply; default 300. */
  readonly timeout?: number | null;
}

const TERMINAL = new Set([EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED, EV_CHANNEL_INVITE_REJECT]);
const FUNCTIONS_PREFIX = 'functions.';

/**
 * AG2's `delegate`: opens a one-shot consulting channel with `target`, sends `prompt` (depth + 1) and returns the
 * reply text, or an `Error: …` string (unknown target — listing the peers that exist —, delegating to itself,
 * open or send failure, the channel ending first, timeout). A `functions.` prefix an LLM echoed into the target is
 * tried without it (AG2 PR #3005). Never throws.
 */
export async function delegate(ctx: ToolContext, args: DelegateArgs): Promise<string> {
  const { client } = ctx;
  const target = args.target;
  const timeout = args.timeout ?? DEFAULT_DELEGATE_TIMEOUT_S;
  const found = await resolveTarget(client, target);
  if (found === null) {
    const available = await availableTargets(client);
    if (available.length > 0)
      return `Error: target ${repr(target)} not found. Available targets: [${available.join(', ')}]`;
    return `Error: target ${repr(target)} not found`;
  }
  const targetId = found.agent_id;
  if (targetId === null) return `Error: target ${repr(target)} has no agent_id`;
  if (targetId === client.agentId) return `Error: cannot delegate to self (target ${repr(target)} is this agent)`;

  let channel: Channel;
  try {
    channel = await client.open({
      type: 'consulting',
      target: targetId,
      ...(args.capability ? { knobs: { capability: args.capability } } : {}),
    });
  } catch (err) {
    return `Error: failed to open consulting channel: ${message(err)}`;
  }
  // Watch before sending: the reply must not reach the default handler as a turn of its own.
  const watch = ctx.waiters.watch(
    channel.channelId,
    (e) => (e.event_type === EV_TEXT && e.sender_id === targetId) || TERMINAL.has(e.event_type),
  );
  let reply: Envelope;
  try {
    try {
      await client.send(channel.channelId, args.prompt, { audience: [targetId], depth: ctx.depth + 1 });
    } catch (err) {
      return `Error: prompt send failed: ${message(err)}`;
    }
    const timer = AbortSignal.timeout(timerMs(timeout));
    try {
      reply = await watch.next(ctx.signal === undefined ? timer : AbortSignal.any([timer, ctx.signal]));
    } catch (err) {
      if (ctx.signal?.aborted === true) return `Error: delegate to ${repr(target)} cancelled with the turn`;
      if (timer.aborted) return `Error: delegate to ${repr(target)} timed out after ${pyFloat(timeout)}s`;
      return `Error: delegate to ${repr(target)} failed: ${message(err)}`;
    }
  } finally {
    watch.close();
  }
  if (TERMINAL.has(reply.event_type)) {
    const reason = reply.event_data['reason'] ?? reply.event_type;
    return `Error: delegate to ${repr(target)} channel closed: ${typeof reason === 'string' ? reason : repr(reason)}`;
  }
  const body = reply.event_data['text'] ?? '';
  return typeof body === 'string' ? body : repr(body);
}

/** Seconds as the whole milliseconds a timer takes (at most 2^31 - 1: about 24 days). */
function timerMs(seconds: number): number {
  return Math.min(Math.max(0, Math.round(seconds * 1000)), 2_147_483_647);
}

/** The literal target first, then without an echoed `functions.` prefix. */
async function resolveTarget(client: ToolClient, target: string): Promise<Passport | null> {
  const candidates =
    target.startsWith(FUNCTIONS_PREFIX) && target.length > FUNCTIONS_PREFIX.length
      ? [target, target.slice(FUNCTIONS_PREFIX.length)]
      : [target];
  for (const name of candidates) {
    try {
      return await client.hub.getAgent(name);
    } catch {
      continue;
    }
  }
  return null;
}

/** Sorted names of the registered peers other than the caller; `[]` when the directory cannot be read. */
async function availableTargets(client: ToolClient): Promise<string[]> {
  try {
    const passports = await client.hub.listAgents({ limit: 1000 });
    const names = new Set(
      passports.filter((p) => p.agent_id !== null && p.agent_id !== client.agentId && p.name).map((p) => p.name),
    );
    return [...names].sort();
  } catch {
    return [];
  }
}
