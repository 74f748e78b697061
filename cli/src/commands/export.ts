import type { HubResponse } from '@ag2net/protocol';
import { open, rename, rm } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { actionOn } from '../env.js';
import type { CliIo } from '../io.js';
import type { Session } from '../session.js';

const ExportOptions = z.object({ out: z.string().min(1).optional() });

/** The most envelopes one `readWal` page asks for. */
const PAGE = 1000;

/**
 * `ag2net export <channel> [--out file]`: a channel's whole log as JSON lines, one envelope per line exactly as
 * `readWal` returns it, oldest first. The operator's, so nothing is left out by audience: what an operator keeps of a
 * channel before the hub's history retention removes it (`hub-service --retain-closed`). With `--out` the lines go
 * to the file (mode 0600, written whole or not at all) and a summary to standard output; else to standard output. A
 * channel whose history expired already fails with `not_found` (exit 3), naming when it expired.
 */
export function exportCommand(program: Command, io: CliIo): void {
  program
    .command('export')
    .description("a channel's whole log as JSON lines, one envelope a line, oldest first (operators: --operator)")
    .argument('<channel>', 'channel id')
    .option('--out <file>', 'write the lines to this file (mode 0600) instead of standard output')
    .action(
      actionOn(io, ExportOptions, async (env, channel, opts) => {
        const session = await env.session();
        const caller = session.requireOperator('export');
        if (opts.out === undefined) {
          await exportLog(session, { channel, caller }, (text) => env.io.out(text));
          return;
        }
        const count = await exportToFile(session, { channel, caller, path: opts.out });
        if (env.out.json) env.out.data({ channel_id: channel, envelopes: count, file: opts.out });
        else env.out.line(`exported ${count} envelopes of channel ${channel} to ${opts.out}`);
      }),
    );
}

interface ExportTarget {
  readonly channel: string;
  readonly caller: string;
}

/** Writes through a sibling `.partial` file renamed at the end, so that a failed export leaves no truncated log. */
async function exportToFile(session: Session, target: ExportTarget & { readonly path: string }): Promise<number> {
  const { path } = target;
  const partial = `${path}.partial`;
  // A leftover of an earlier failed export would keep its own mode: start from no file.
  await rm(partial, { force: true });
  const file = await open(partial, 'w', 0o600);
  let count: number;
  try {
    count = await exportLog(session, target, async (text) => {
      await file.write(text);
    });
    await file.close();
  } catch (err) {
    await file.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw err;
  }
  await rename(partial, path);
  return count;
}

/** Reads the log page by page (`readWal`, the operator's) and hands each page's lines to `write`; returns the count. */
async function exportLog(
  session: Session,
  target: ExportTarget,
  write: (text: string) => void | Promise<void>,
): Promise<number> {
  let since: number | null = 1;
  let count = 0;
  while (since !== null) {
    const page: HubResponse<'readWal'> = await session.hub.call(
      'readWal',
      { channel_id: target.channel, since, limit: PAGE },
      { caller: target.caller },
    );
    if (page.envelopes.length > 0) await write(page.envelopes.map((e) => `${JSON.stringify(e)}\n`).join(''));
    count += page.envelopes.length;
    since = page.next_since;
  }
  return count;
}
