import type { Envelope } from '@ag2net/protocol';
import type { ToolClient } from '../tools/context.js';

/** The hub's page size for `readWal` (its default `limit`). */
const PAGE = 1000;

/**
 * A channel's log as `client` may read it, from the start through sequence `until` (default the end), read page
 * by page.
 */
export async function readLog(
  client: Pick<ToolClient, 'readWal'>,
  channelId: string,
  until?: number,
): Promise<Envelope[]> {
  const out: Envelope[] = [];
  let since = 1;
  for (;;) {
    const page = await client.readWal(channelId, until === undefined ? { since } : { since, until });
    out.push(...page);
    const last = page.at(-1)?.sequence;
    if (page.length < PAGE || last === undefined || (until !== undefined && last >= until)) return out;
    since = last + 1;
  }
}

/**
 * AG2's `read_wal_until`: the log before `envelope` (the turn's trigger, fed to the LLM separately). Read
 * through the trigger's sequence when it carries one; otherwise the whole log cut at its id (all of it when the
 * id is not there).
 */
export async function readLogUntil(client: Pick<ToolClient, 'readWal'>, envelope: Envelope): Promise<Envelope[]> {
  if (envelope.sequence !== undefined) {
    if (envelope.sequence <= 1) return [];
    return readLog(client, envelope.channel_id, envelope.sequence - 1);
  }
  const log = await readLog(client, envelope.channel_id);
  const index = log.findIndex((e) => e.envelope_id === envelope.envelope_id);
  return index === -1 ? log : log.slice(0, index);
}
