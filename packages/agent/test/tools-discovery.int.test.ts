import { EV_TEXT } from '@ag2net/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { channels } from '../src/tools/channels.js';
import { context } from '../src/tools/context-tool.js';
import { peers } from '../src/tools/peers.js';
import { say } from '../src/tools/say.js';
import { runTask } from '../src/index.js';
import { netKit, texts, toolAgent, type ToolAgent } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

describe('peers', () => {
  it('finds the other agents, filtered by capability, never the caller', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice', { resume: { claimed_capabilities: ['debate'] } });
    const bob = await toolAgent(client, 'bob', { resume: { summary: 'debater', claimed_capabilities: ['debate'] } });
    await toolAgent(client, 'carol', { resume: { summary: 'qa lead' } });
    expect(await peers(alice.ctx(), { action: 'find', capability: 'debate' })).toEqual([
      {
        name: 'bob',
        agent_id: bob.client.agentId,
        summary: 'debater',
        capabilities: ['debate'],
        observed_success_rate: null,
        cost: null,
      },
    ]);
    expect(await peers(alice.ctx(), { action: 'find', capability: 'juggling' })).toEqual([]);
    const all = await peers(alice.ctx(), { action: 'find', sort_by: 'name' });
    expect(Array.isArray(all) ? all.map((p) => p.name) : all).toEqual(['bob', 'carol']);
  });

  it('sorts by cost (unknown last) and by track record (best first)', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    // The track record is the hub's to observe: each agent runs capability-tagged tasks that complete or fail.
    const track = async (agent: ToolAgent, capability: string, completed: number, failed: number) => {
      for (let i = 0; i < completed + failed; i++) {
        await runTask({ client: agent.client, title: `job ${i}`, capability }, () =>
          i < completed ? Promise.resolve('done') : Promise.reject(new Error('failed on purpose')),
        ).catch(() => undefined);
      }
    };
    await track(await toolAgent(client, 'pricey', { passport: { cost: { input_per_mtok: 15 } } }), 'qa', 4, 0);
    await track(await toolAgent(client, 'free', { passport: { cost: { input_per_mtok: 0 } } }), 'qa', 1, 3);
    const unknown = await toolAgent(client, 'unknown');
    await track(unknown, 'qa', 1, 1);
    await track(unknown, 'ops', 2, 0);
    const names = async (sortBy: 'cost' | 'track_record'): Promise<unknown> => {
      const found = await peers(alice.ctx(), { action: 'find', sort_by: sortBy });
      return Array.isArray(found) ? found.map((p) => [p.name, p.observed_success_rate]) : found;
    };
    expect(await names('cost')).toEqual([
      ['free', 0.25],
      ['pricey', 1],
      ['unknown', 0.75],
    ]);
    expect(await names('track_record')).toEqual([
      ['pricey', 1],
      ['unknown', 0.75],
      ['free', 0.25],
    ]);
  });

  it('describes a peer with its own SKILL.md, or one rendered from its resume', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob', {
      skillMd: '---\nname: bob\n---\nI debate.\n',
      resume: { domains: ['law'] },
    });
    await toolAgent(client, 'carol', { resume: { summary: 'qa lead' } });
    expect(await peers(alice.ctx(), { action: 'describe', name: 'bob' })).toEqual({
      passport: { name: 'bob', agent_id: bob.client.agentId, owner: '', provider: null, model: null },
      resume: { summary: '', claimed_capabilities: [], domains: ['law'], observed: {} },
      skill_md: '---\nname: bob\n---\nI debate.\n',
    });
    expect(await peers(alice.ctx(), { action: 'describe', name: 'carol' })).toMatchObject({
      skill_md: '---\nname: carol\ndescription: qa lead\n---\n',
    });
    expect(await peers(alice.ctx(), { action: 'describe', name: 'ghost' })).toBe("Error: peer 'ghost' not found");
    expect(await peers(alice.ctx(), { action: 'describe' })).toBe('Error: describe requires `name` (or agent_id)');
  });
});

describe('channels', () => {
  it('opens, lists, describes and closes a channel', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob');
    const carol = await toolAgent(client, 'carol');
    const ids = [alice.client.agentId, bob.client.agentId];
    const opened = await channels(alice.ctx(), { action: 'open', type: 'conversation', target: 'bob' });
    const cid = typeof opened === 'object' && !Array.isArray(opened) ? String(opened['channel_id']) : '';
    expect(opened).toEqual({ channel_id: cid, type: 'conversation', participants: ids });
    expect(await channels(alice.ctx(), { action: 'list' })).toEqual([
      { channel_id: cid, type: 'conversation', state: 'active', participants: ids },
    ]);
    expect(await channels(alice.ctx(), { action: 'info', channel_id: cid })).toMatchObject({
      channel_id: cid,
      type: 'conversation',
      version: 1,
      state: 'active',
      creator_id: alice.client.agentId,
      participants: [
        { agent_id: ids[0], role: 'initiator', order: 0 },
        { agent_id: ids[1], role: 'respondent', order: 1 },
      ],
      knobs: {},
      expectations: [{ name: 'max_silence', on_violation: 'audit', params: { seconds: 3600 } }],
      close_reason: '',
    });
    // To carol, who is not in it, the channel is not there.
    expect(await channels(carol.ctx(), { action: 'info', channel_id: cid })).toBe(`Error: channel '${cid}' not found`);
    expect(await channels(alice.ctx(), { action: 'info', channel_id: 'nope' })).toBe("Error: channel 'nope' not found");
    const meta = await alice.client.getChannel(cid);
    expect(await channels(alice.ctx(meta), { action: 'close' })).toEqual({
      channel_id: cid,
      state: 'closed',
      close_reason: 'closed_by_agent',
    });
    expect(await channels(alice.ctx(), { action: 'list' })).toEqual([]);
    expect(await channels(alice.ctx(), { action: 'list', state: 'all' })).toEqual([
      { channel_id: cid, type: 'conversation', state: 'closed', participants: ids },
    ]);
  });

  it('seeds a channel it opens with the first message', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    await toolAgent(client, 'bob');
    const opened = await channels(alice.ctx(), {
      action: 'open',
      type: 'conversation',
      target: 'bob',
      message: 'kickoff',
    });
    const seed = typeof opened === 'object' && !Array.isArray(opened) ? opened['seed_envelope_id'] : undefined;
    const cid = typeof opened === 'object' && !Array.isArray(opened) ? String(opened['channel_id']) : '';
    const log = await alice.client.readWal(cid);
    expect(log.filter((e) => e.event_type === EV_TEXT).map((e) => [e.envelope_id, e.event_data])).toEqual([
      [seed, { text: 'kickoff' }],
    ]);
  });

  it('answers a missing argument or a failed open with an error string', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    expect(await channels(alice.ctx(), { action: 'open', type: 'conversation' })).toBe(
      'Error: open requires `type` and `target`',
    );
    expect(await channels(alice.ctx(), { action: 'info' })).toBe('Error: info requires `channel_id`');
    expect(await channels(alice.ctx(), { action: 'close' })).toBe(
      'Error: close requires `channel_id` or an active channel',
    );
    expect(await channels(alice.ctx(), { action: 'open', type: 'conversation', target: 'ghost' })).toBe(
      'Error: open failed: agent not found: ghost',
    );
  });
});

describe('context', () => {
  it('searches and quotes the visible texts of the current channel', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob');
    const channel = await alice.client.open({ type: 'conversation', target: 'bob' });
    const sent: string[] = [];
    for (const [who, text] of [
      [alice, 'alice 1'],
      [bob, 'which framework do we use?'],
      [alice, 'alice 2'],
      [alice, 'alice 3'],
      [bob, 'x'.repeat(300)],
    ] as const) {
      sent.push(await who.client.send(channel.channelId, text));
    }
    const meta = await alice.client.getChannel(channel.channelId);
    const log = await alice.client.readWal(channel.channelId);
    const when = (id: string | undefined): string | undefined => log.find((e) => e.envelope_id === id)?.created_at;
    expect(await context(alice.ctx(meta), { action: 'search', query: 'FRAMEWORK' })).toEqual([
      {
        envelope_id: sent[1],
        sender_id: bob.client.agentId,
        when: when(sent[1]),
        excerpt: 'which framework do we use?',
      },
    ]);
    const long = await context(alice.ctx(meta), { action: 'search', query: 'xxx' });
    expect(Array.isArray(long) ? long[0]?.['excerpt'] : long).toBe(`${'x'.repeat(239)}…`);
    expect(await context(alice.ctx(meta), { action: 'quote', speaker: 'alice', recent_n: 2 })).toEqual([
      { envelope_id: sent[2], when: when(sent[2]), text: 'alice 2' },
      { envelope_id: sent[3], when: when(sent[3]), text: 'alice 3' },
    ]);
    expect(await context(alice.ctx(), { action: 'search', query: 'alice', scope: 'knowledge' })).toEqual([]);
    expect(await context(alice.ctx(meta), { action: 'search' })).toBe('Error: search requires `query`');
    expect(await context(alice.ctx(), { action: 'search', query: 'x' })).toBe(
      'Error: search scope=channel requires an active channel',
    );
    expect(await context(alice.ctx(meta), { action: 'quote', speaker: 'ghost' })).toBe(
      "Error: speaker 'ghost' not found",
    );
    expect(await context(alice.ctx(), { action: 'quote', speaker: 'bob' })).toBe(
      'Error: quote requires an active channel or `channel_id`',
    );
    expect(await context(alice.ctx(), { action: 'search', query: 'x', channel_id: 'nope' })).toBe(
      "Error: channel 'nope' not found",
    );
  });
});

describe('say', () => {
  it('posts into the current channel to the named audience', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    const bob = await toolAgent(client, 'bob');
    const channel = await alice.client.open({ type: 'conversation', target: 'bob' });
    const meta = await alice.client.getChannel(channel.channelId);
    const result = await say(alice.ctx(meta), { content: 'psst', audience: ['bob'] });
    const posted = (await alice.client.readWal(channel.channelId)).find((e) => e.event_type === EV_TEXT);
    expect(result).toBe(`posted envelope ${posted?.envelope_id}`);
    expect([posted?.audience, posted?.event_data]).toEqual([[bob.client.agentId], { text: 'psst' }]);
    expect(texts(await bob.client.readWal(channel.channelId))).toEqual([[alice.client.agentId, 'psst']]);
  });

  it('answers a missing channel, an unknown peer and a refused send with an error string', async () => {
    const { client } = await kit.open();
    const alice = await toolAgent(client, 'alice');
    await toolAgent(client, 'bob');
    const channel = await alice.client.open({ type: 'consulting', target: 'bob' });
    const meta = await alice.client.getChannel(channel.channelId);
    expect(await say(alice.ctx(), { content: 'x' })).toBe('Error: no current channel and no channel_id provided');
    expect(await say(alice.ctx(), { content: 'x', channel_id: 'nope' })).toBe(
      "Error: channel 'nope' not found: channel not found: nope",
    );
    expect(await say(alice.ctx(meta), { content: 'x', audience: ['ghost'] })).toBe("Error: peer 'ghost' not found");
    const posted = await say(alice.ctx(meta), { content: 'question' });
    const [question] = (await alice.client.readWal(channel.channelId)).filter((e) => e.event_type === EV_TEXT);
    expect(posted).toBe(`posted envelope ${question?.envelope_id}`);
    expect(await say(alice.ctx(meta), { content: 'again' })).toBe(
      `Error: send failed: consulting channel '${channel.channelId}' expects reply from respondent ` +
        `'${meta.participants[1]?.agent_id}', got '${alice.client.agentId}'`,
    );
  });
});
