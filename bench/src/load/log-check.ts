import type { HubRpc } from '@ag2net/client';
import type { HubResponse } from '@ag2net/protocol';
import type { AckedPost } from './post-load.js';

/** A channel to check, and a participant to read its log as. */
export interface LoggedChannel {
  readonly channelId: string;
  readonly readerId: string;
}

/** Envelopes per `readWal` page (the operation's maximum). */
const PAGE = 10_000;
/** Problems listed in the error before the rest are counted. */
const SHOWN = 10;

/** A channel's log broke what the hub promises: a gap, a repeat, or an acked post missing or misplaced. */
export class LogCheckError extends Error {
  override readonly name = 'LogCheckError';

  constructor(readonly problems: readonly string[]) {
    const more = problems.length > SHOWN ? `\n… and ${problems.length - SHOWN} more` : '';
    super(`the channels' logs are not what was acked:\n${problems.slice(0, SHOWN).join('\n')}${more}`);
  }
}

/**
 * Reads each channel's whole log through `readWal` and checks it: sequences run 1, 2, … to the log's last without a
 * gap or a repeat, no envelope id appears twice, and every acked post is there once, at the sequence its ack gave.
 * Throws `LogCheckError` listing what is wrong; returns the number of envelopes read.
 */
export async function checkLogs(
  rpc: HubRpc,
  channels: readonly LoggedChannel[],
  acked: readonly AckedPost[],
): Promise<number> {
  const problems: string[] = [];
  let read = 0;
  for (const channel of channels) {
    const sequenceOf = await readLog(rpc, channel, problems);
    read += sequenceOf.size;
    for (const post of acked) {
      if (post.channelId !== channel.channelId) continue;
      const at = sequenceOf.get(post.envelopeId);
      if (at === undefined)
        problems.push(`acked post ${post.envelopeId} (sequence ${post.sequence}) is not in the log`);
      else if (at !== post.sequence)
        problems.push(`acked post ${post.envelopeId} is at ${at}, acked as ${post.sequence}`);
    }
  }
  if (problems.length > 0) throw new LogCheckError(problems);
  return read;
}

/** The channel's log as envelope id → sequence, with its gaps and repeats added to `problems`. */
async function readLog(rpc: HubRpc, channel: LoggedChannel, problems: string[]): Promise<Map<string, number>> {
  const sequenceOf = new Map<string, number>();
  const where = `channel ${channel.channelId}`;
  let expected = 1;
  let lastSequence = 0;
  for (let since: number | null = 1; since !== null;) {
    const page: HubResponse<'readWal'> = await rpc.call(
      'readWal',
      { channel_id: channel.channelId, since, limit: PAGE },
      { caller: channel.readerId },
    );
    lastSequence = page.last_sequence;
    for (const { envelope_id: id, sequence } of page.envelopes) {
      if (sequence === undefined) {
        problems.push(`${where}: envelope ${id} has no sequence`);
        continue;
      }
      if (sequence !== expected) problems.push(`${where}: sequence ${sequence} where ${expected} was due`);
      expected = sequence + 1;
      if (sequenceOf.has(id)) problems.push(`${where}: envelope ${id} twice`);
      sequenceOf.set(id, sequence);
    }
    since = page.next_since;
  }
  if (expected !== lastSequence + 1) problems.push(`${where}: read up to ${expected - 1} of ${lastSequence}`);
  return sequenceOf;
}
