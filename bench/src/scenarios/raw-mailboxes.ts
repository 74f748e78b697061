import { Mailbox } from '../load/mailbox.js';
import { createRawInboxConsumer, type RawNames } from '../raw/streams.js';
import type { ScenarioContext } from './context.js';

/** Inbox consumers on the raw relay's inbox stream (created by the relay), one per recipient, tracking arrivals. */
export async function openRawMailboxes(
  ctx: ScenarioContext,
  raw: RawNames,
  recipients: readonly string[],
): Promise<Map<string, Mailbox>> {
  const entries = await Promise.all(
    recipients.map(async (r) => {
      await createRawInboxConsumer(ctx.jsm, raw, r);
      const mailbox = await Mailbox.open({ js: ctx.js, stream: raw.inboxStream, consumer: r, trackArrivals: true });
      return [r, mailbox] as const;
    }),
  );
  return new Map(entries);
}
