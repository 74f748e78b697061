/**
 * How `ag2net wal` prints what agents' turns leave in a log: an answer carrying its turn report ends with the report in
 * one suffix (no JSON in the line; `chat` shows the answer alone), and a failure notice reads as the agent that could
 * not answer, the reason, the cause, the attempts and the model.
 */
import { ackInvite, HubClient, isInviteFor, type AgentClient, type HumanClient } from '@ag2net/client';
import { startHub, type Hub } from '@ag2net/hub';
import { EV_CHANNEL_CLOSED, EV_TEXT, EV_TURN_FAILED, type Envelope } from '@ag2net/protocol';
import { natsPerFile, turnReportFixture, uniqueName, waitFor } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shortTime } from '../src/render.js';
import { run } from './support.js';

const nats = natsPerFile();
const prefix = uniqueName('cli-turns');
let hub: Hub;
let client: HubClient;
let alice: HumanClient;

const at = (): string[] => ['--server', nats.url, '--prefix', prefix];

const REPORT = turnReportFixture();

/** Accepts invites and answers a person's text with `event_type` and `event_data`, caused by it. */
function answering(event_type: string, event_data: Record<string, unknown>) {
  return async (e: Envelope, self: AgentClient): Promise<void> => {
    if (isInviteFor(self, e)) await ackInvite(self, e);
    else if (e.event_type === EV_TEXT && e.sender_id !== self.agentId) {
      await self.sendEnvelope({ channel_id: e.channel_id, causation_id: e.envelope_id, event_type, event_data });
    }
  };
}

beforeAll(async () => {
  hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
  client = await HubClient.connect({ servers: nats.url, prefix });
  await client.register({ name: 'expert' }, { handler: answering(EV_TEXT, { text: 'Durable first.', turn: REPORT }) });
  await client.register(
    { name: 'broken' },
    {
      handler: answering(EV_TURN_FAILED, {
        agent_name: 'broken',
        reason: 'the model could not be reached after 3 attempts',
        code: 'model_unavailable',
        cause: {
          kind: 'connection',
          exc_type: 'APICallError',
          code: 'ECONNREFUSED',
          message: 'ECONNREFUSED 127.0.0.1:9',
        },
        attempts: 3,
        provider: 'openai-compatible',
        model: 'local-1',
      }),
    },
  );
  alice = await client.registerHuman({ name: 'alice' });
});

afterAll(async () => {
  await client?.close({ graceMs: 0 });
  await hub?.close();
});

/** Asks `agent` a question in a consulting channel; resolves with the log once the channel closed. */
async function consult(agent: string, question: string): Promise<{ channelId: string; log: Envelope[] }> {
  const channel = await alice.open({ type: 'consulting', target: agent });
  await channel.send(question);
  const log = await waitFor(
    async () => {
      const envelopes = await alice.readWal(channel.channelId);
      return envelopes.some((e) => e.event_type === EV_CHANNEL_CLOSED) ? envelopes : undefined;
    },
    { what: 'the channel closed' },
  );
  return { channelId: channel.channelId, log };
}

/** The line `wal` prints for `envelope`, as the command prints it without colour. */
function lineOf(envelope: Envelope | undefined, rest: string): string {
  if (envelope === undefined) throw new Error('no such envelope in the log');
  return `${`#${envelope.sequence ?? '?'}`.padStart(5)} ${shortTime(envelope.created_at)} ${rest}`;
}

describe('ag2net wal: turns', () => {
  it("ends an answer's line with its turn report, never its JSON", async () => {
    const { channelId, log } = await consult('expert', 'What does a WAL guarantee?');
    const r = await run([...at(), '--as', 'alice', 'wal', channelId]);
    const answer = log.find((e) => e.event_type === EV_TEXT && e.event_data['text'] === 'Durable first.');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')).toContain(
      lineOf(answer, 'expert Durable first. · 1.2 s · 312→54 tokens · 1 retry · openai/gpt-4.1-mini'),
    );
    expect(r.out).not.toContain('duration_ms');
  });

  it('leaves the turn report out of a chat, which shows the answer alone', async () => {
    const r = await run([...at(), '--as', 'alice', 'chat', 'expert', '--type', 'consulting'], {
      stdin: ['And a log?'],
    });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ expert Durable first\.$/m);
    expect(r.out).not.toContain('gpt-4.1-mini');
  });

  it('prints a failed turn as the agent that could not answer, with reason, cause, attempts and model', async () => {
    const { channelId, log } = await consult('broken', 'Anyone there?');
    const r = await run([...at(), '--as', 'alice', 'wal', channelId]);
    const failure = log.find((e) => e.event_type === EV_TURN_FAILED);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')).toContain(
      lineOf(
        failure,
        'broken could not answer: the model could not be reached after 3 attempts (ECONNREFUSED 127.0.0.1:9) ' +
          '[openai-compatible/local-1]',
      ),
    );
  });
});
