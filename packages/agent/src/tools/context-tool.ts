import { repr } from '@ag2net/protocol/internal';
import { EV_TEXT, visibleTo, type Envelope } from '@ag2net/protocol';
import { readLog } from '../runtime/log.js';
import type { ToolContext } from './context.js';

/** Arguments of `context`. */
export interface ContextArgs {
  readonly action: 'search' | 'quote';
  readonly query?: string | null;
  /** `channel` (default) searches the channel's log; `knowledge` has no store here and finds nothing. */
  readonly scope?: 'channel' | 'knowledge' | null;
  /** For `quote`: a name or agent id. */
  readonly speaker?: string | null;
  /** For `quote`; default 1. */
  readonly recent_n?: number | null;
  /** For `search`; default 10. */
  readonly limit?: number | null;
  readonly channel_id?: string | null;
}

const EXCERPT_CHARS = 240;

/**
 * AG2's `context`: `search` the visible texts of the current (or given) channel for `query` (case-insensitive
 * substring) → `[{envelope_id, sender_id, when, excerpt}]`; `quote` the last `recent_n` texts of `speaker`, oldest
 * first → `[{envelope_id, when, text}]`. Failures are `Error: …` strings.
 */
export async function context(ctx: ToolContext, args: ContextArgs): Promise<Record<string, unknown>[] | string> {
  const { client } = ctx;
  const channelId = args.channel_id || ctx.channel?.channel_id;
  if (args.action === 'search') {
    if (!args.query) return 'Error: search requires `query`';
    if ((args.scope ?? 'channel') === 'knowledge') return [];
    if (!channelId) return 'Error: search scope=channel requires an active channel';
    const log = await readOrNull(ctx, channelId);
    if (log === null) return `Error: channel ${repr(channelId)} not found`;
    const needle = args.query.toLowerCase();
    const limit = args.limit ?? 10;
    const results: Record<string, unknown>[] = [];
    for (const e of log) {
      const text = textOf(e, client.agentId);
      if (text === null || !text.toLowerCase().includes(needle)) continue;
      results.push({ envelope_id: e.envelope_id, sender_id: e.sender_id, when: e.created_at, excerpt: excerpt(text) });
      if (results.length >= limit) break;
    }
    return results;
  }
  if (!args.speaker) return 'Error: quote requires `speaker`';
  if (!channelId) return 'Error: quote requires an active channel or `channel_id`';
  let speakerId: string | null;
  try {
    speakerId = (await client.hub.getAgent(args.speaker)).agent_id;
  } catch {
    return `Error: speaker ${repr(args.speaker)} not found`;
  }
  const log = await readOrNull(ctx, channelId);
  if (log === null) return `Error: channel ${repr(channelId)} not found`;
  const recentN = args.recent_n ?? 1;
  const picks: Record<string, unknown>[] = [];
  for (const e of [...log].reverse()) {
    if (e.sender_id !== speakerId) continue;
    const text = textOf(e, client.agentId);
    if (text === null) continue;
    picks.push({ envelope_id: e.envelope_id, when: e.created_at, text });
    if (picks.length >= recentN) break;
  }
  return picks.reverse();
}

/** The text of a visible `EV_TEXT`, else `null`. */
function textOf(e: Envelope, readerId: string): string | null {
  if (e.event_type !== EV_TEXT || !visibleTo(e, readerId)) return null;
  const text = e.event_data['text'];
  return typeof text === 'string' ? text : null;
}

function excerpt(text: string): string {
  const chars = [...text];
  return chars.length <= EXCERPT_CHARS ? text : `${chars.slice(0, EXCERPT_CHARS - 1).join('')}…`;
}

async function readOrNull(ctx: ToolContext, channelId: string): Promise<Envelope[] | null> {
  try {
    return await readLog(ctx.client, channelId);
  } catch {
    return null;
  }
}
