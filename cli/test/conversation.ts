/**
 * The conversation the CLI's integration tests read: bob answers every text with `echo: <text>`, alice opens a
 * conversation with him and says hello.
 */
import { ackInvite, isInviteFor, type AgentClient, type HumanClient } from '@ag2net/client';
import { EV_TEXT, type Envelope } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';

/** An envelope's text, or its event type when it is no text. */
export const text = (e: Envelope): unknown => (e.event_type === EV_TEXT ? e.event_data['text'] : e.event_type);

/** Bob's handler: accepts invites and answers every text with `echo: <text>`. */
export async function echo(e: Envelope, self: AgentClient): Promise<void> {
  if (isInviteFor(self, e)) await ackInvite(self, e);
  else if (e.event_type === EV_TEXT) await self.send(e.channel_id, `echo: ${String(e.event_data['text'])}`);
}

/** Alice opens a conversation with bob and says hello; resolves with the channel's id once bob's echo is admitted. */
export async function helloConversation(alice: HumanClient): Promise<string> {
  const channel = await alice.open({ type: 'conversation', target: 'bob' });
  await channel.send('hello');
  await waitFor(async () => (await alice.readWal(channel.channelId)).some((e) => text(e) === 'echo: hello'), {
    what: "bob's answer admitted",
  });
  return channel.channelId;
}
