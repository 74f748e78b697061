import type { Envelope } from '@ag2net/protocol';
import type { ToolClient } from '../tools/context.js';

/** The hub's page size for `readWal` (its default `limit`). */
const PAGE = 1000;

type LogReader = Pick<ToolClient, 'readWal'>;

/**
 * A channel's log as `client` may read it, from the start through sequence `until` (default the end), read page
 * by page.
 */
export async function readLog(client: LogReader, channelId: string, until?: number): Promise<Envelope[]> {
  return readLogFrom(client, channelId, { since: 1, until });
}

/** The part of a channel's log from sequence `since` through `until` (default the end) that `client` may read. */
async function readLogFrom(
  client: LogReader,
  channelId: string,
  range: { readonly since: number; readonly until: number | undefined },
): Promise<Envelope[]> {
  const { until } = range;
  const out: Envelope[] = [];
  let since = range.since;
  for (;;) {
    const page = await client.readWal(channelId, until === undefined ? { since } : { since, until });
    out.push(...page);
    const last = page.at(-1)?.sequence;
    if (page.length < PAGE || last === undefined || (until !== undefined && last >= until)) return out;
    since = last + 1;
  }
}

/**
 * What an agent has read of its channels' logs, so that each turn reads only what is new since the last one: a
 * log is append-only and what the agent may see of an entry never changes, so the envelopes through a sequence,
 * once read, stay true. Keeps the `maxChannels` channels read most recently.
 */
export class ChannelLogCache {
  readonly #logs = new Map<string, { readonly through: number; readonly envelopes: readonly Envelope[] }>();

  constructor(readonly maxChannels = 64) {}

  /** The channel's log through sequence `until` as `client` may read it, reading only past what is cached. */
  async through(client: LogReader, channelId: string, until: number): Promise<Envelope[]> {
    let entry = this.#logs.get(channelId) ?? { through: 0, envelopes: [] };
    if (entry.through < until) {
      const more = await readLogFrom(client, channelId, { since: entry.through + 1, until });
      // Another turn of this channel may have read further meanwhile: keep whichever covers more.
      const now = this.#logs.get(channelId);
      entry =
        now !== undefined && now.through >= until ? now : { through: until, envelopes: [...entry.envelopes, ...more] };
    }
    this.#logs.delete(channelId);
    this.#logs.set(channelId, entry);
    if (this.#logs.size > this.maxChannels) {
      const oldest = this.#logs.keys().next();
      if (oldest.done !== true) this.#logs.delete(oldest.value);
    }
    return entry.envelopes.filter((e) => (e.sequence ?? 0) <= until);
  }
}

/**
 * AG2's `read_wal_until`: the log before `envelope` (the turn's trigger, fed to the LLM separately). Read
 * through the trigger's sequence when it carries one (with `cache`, only what is new since the last turn);
 * otherwise the whole log cut at its id (all of it when the id is not there).
 */
export async function readLogUntil(
  client: LogReader,
  envelope: Envelope,
  cache?: ChannelLogCache,
): Promise<Envelope[]> {
  if (envelope.sequence !== undefined) {
    if (envelope.sequence <= 1) return [];
    if (cache !== undefined) return cache.through(client, envelope.channel_id, envelope.sequence - 1);
    return readLog(client, envelope.channel_id, envelope.sequence - 1);
  }
  const log = await readLog(client, envelope.channel_id);
  const index = log.findIndex((e) => e.envelope_id === envelope.envelope_id);
  return index === -1 ? log : log.slice(0, index);
}
