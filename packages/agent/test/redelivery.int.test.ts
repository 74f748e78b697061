import type { LanguageModelV3 } from '@ai-sdk/provider';
import { replyEnvelopeId } from '@ag2net/client';
import { EV_TEXT, OPERATOR_CALLER, type Envelope } from '@ag2net/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createDefaultHandler, createScriptedModel, registerAgent } from '../src/index.js';
import { netKit, texts, until } from './support.js';

/** The turn context the client gives a handler: a signal that is never aborted here. */
const turn = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

/** A language model whose every call fails, as a provider outage does. */
function failingModel(): LanguageModelV3 & { calls: number } {
  const model = {
    specificationVersion: 'v3' as const,
    provider: 'test.failing',
    modelId: 'down',
    supportedUrls: {},
    calls: 0,
    doGenerate() {
      model.calls += 1;
      return Promise.reject(new Error('provider is down'));
    },
    doStream() {
      return Promise.reject(new Error('provider is down'));
    },
  };
  return model;
}

describe('at-most-once answers', () => {
  it('does not run the LLM again or post a second reply when an answered trigger is redelivered', async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = createScriptedModel(['hi alice', 'a second answer that must not be posted']);
    const handler = createDefaultHandler(new Agent({ name: 'bob', model }));
    const bob = await client.register({ name: 'bob' }, { handler });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('hello bob');
    const trigger = await until(
      async () => (await bob.readWal(channel.channelId)).find((e) => e.event_type === EV_TEXT),
      'the trigger',
    );
    await until(
      async () =>
        (await bob.readWal(channel.channelId)).some((e) => e.event_type === EV_TEXT && e.sender_id === bob.agentId),
      "bob's reply",
    );

    await handler(trigger, bob, turn());

    expect(model.calls).toHaveLength(1);
    expect(model.remaining).toBe(1);
    expect(texts(await alice.readWal(channel.channelId), { [alice.agentId]: 'alice', [bob.agentId]: 'bob' })).toEqual([
      ['alice', 'hello bob'],
      ['bob', 'hi alice'],
    ]);
  });

  it('admits one reply when two runs of the same turn race (each posts under the same reply id)', async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = createScriptedModel(['first run', 'second run']);
    const handler = createDefaultHandler(new Agent({ name: 'bob', model }));
    // Bob's own client never runs the handler, so both runs below are the test's.
    const bob = await client.register({ name: 'bob' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const id = await channel.send('hello bob');
    const trigger: Envelope = await until(
      async () => (await bob.readWal(channel.channelId)).find((e) => e.envelope_id === id),
      'the trigger',
    );

    await Promise.all([handler(trigger, bob, turn()), handler(trigger, bob, turn())]);

    expect(model.calls).toHaveLength(2);
    const replies = (await alice.readWal(channel.channelId)).filter(
      (e) => e.event_type === EV_TEXT && e.sender_id === bob.agentId,
    );
    expect(replies.map((e) => [e.envelope_id, e.causation_id])).toEqual([[replyEnvelopeId(bob.agentId, id), id]]);
    expect(['first run', 'second run']).toContain(replies[0]?.event_data['text']);
  });

  it('reports a failed turn to the hub, posts no reply and keeps the conversation open', async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = failingModel();
    // An unknown exception is transient: the turn runs twice, then its failure is reported once.
    const bob = await registerAgent(client, new Agent({ name: 'bob', model }), {
      maxTurnAttempts: 2,
      turnRetryBackoffMs: 10,
    });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    const id = await channel.send('hello bob');

    const [record] = await until(async () => {
      const { records } = await client.call('readAudit', { kinds: ['turn_failed'] }, { caller: OPERATOR_CALLER });
      return records.length > 0 ? records : undefined;
    }, 'the turn_failed audit record');
    expect(record).toMatchObject({
      kind: 'turn_failed',
      channel_id: channel.channelId,
      agent_id: bob.agentId,
      envelope_id: id,
      exc_message: 'provider is down',
    });
    expect(model.calls).toBe(2);
    expect((await alice.getChannel(channel.channelId)).state).toBe('active');
    expect((await alice.readWal(channel.channelId)).filter((e) => e.event_type === EV_TEXT)).toHaveLength(1);
  });
});
