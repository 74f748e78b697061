import { HubClient, type AgentClient, type HumanClient } from '@ag2net/client';
import { startHub, type Hub } from '@ag2net/hub';
import {
  ChannelMetadataSchema,
  EV_TEXT,
  EnvelopeSchema,
  HealthSchema,
  PassportSchema,
  TaskMetadataSchema,
  newId,
} from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { echo, helloConversation, text } from './conversation.js';
import { jsonLines, run, start } from './support.js';

const nats = natsPerFile();
const prefix = uniqueName('cli');
let hub: Hub;
let client: HubClient;
let alice: HumanClient;
let bob: AgentClient;
let channelId: string;

/** The global flags of every command line here: this file's server and hub. */
const at = (): string[] => ['--server', nats.url, '--prefix', prefix];

beforeAll(async () => {
  hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
  client = await HubClient.connect({ servers: nats.url, prefix });
  // bob answers every text with "echo: <text>".
  bob = await client.register({ name: 'bob' }, { handler: echo });
  alice = await client.registerHuman({ name: 'alice' });
  await client.registerHuman({ name: 'carol' });
  channelId = await helloConversation(alice);
});

afterAll(async () => {
  await client?.close({ graceMs: 0 });
  await hub?.close();
});

describe('ag2net health and agents', () => {
  it('reports the active hub as JSON', async () => {
    const r = await run([...at(), 'health', '--json']);
    const health = HealthSchema.parse(JSON.parse(r.out));
    expect([r.code, health.role, health.registered_agents, health.active_channels]).toEqual([0, 'active', 3, 1]);
  });

  it('prints the health as aligned fields without colour when not on a terminal', async () => {
    const r = await run([...at(), 'health']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^role +active$/m);
    expect(r.out).not.toContain('\u001b[');
  });

  it('lists the directory and shows one agent', async () => {
    const ls = await run([...at(), 'agents', 'ls', '--json']);
    const names = z
      .array(PassportSchema)
      .parse(JSON.parse(ls.out))
      .map((p) => p.name);
    expect([ls.code, names.sort()]).toEqual([0, ['alice', 'bob', 'carol']]);

    const humans = await run([...at(), 'agents', 'ls', '--kind', 'human', '--json']);
    expect(
      z
        .array(PassportSchema)
        .parse(JSON.parse(humans.out))
        .map((p) => p.name)
        .sort(),
    ).toEqual(['alice', 'carol']);

    const show = await run([...at(), 'agents', 'show', 'bob', '--json']);
    const shown = z
      .looseObject({ passport: PassportSchema, skill_md: z.string().nullable() })
      .parse(JSON.parse(show.out));
    expect([show.code, shown.passport.agent_id, shown.skill_md]).toEqual([0, bob.agentId, null]);

    const table = await run([...at(), 'agents', 'ls']);
    expect(table.out.split('\n')[0]).toMatch(/^NAME +ID +KIND +MODEL +OWNER +REGISTERED$/);
  });

  it('exits 3 for an agent nobody has, naming it', async () => {
    const r = await run([...at(), 'agents', 'show', 'nobody']);
    expect(r.code).toBe(3);
    expect(r.err).toContain('not_found');
    expect(r.out).toBe('');
  });
});

describe('ag2net channels', () => {
  it('lists the caller’s channels with the state, type and agent filters', async () => {
    const ids = async (...args: string[]): Promise<string[]> => {
      const r = await run([...at(), '--as', 'alice', 'channels', 'ls', '--json', ...args]);
      expect(r.code).toBe(0);
      return z
        .array(ChannelMetadataSchema)
        .parse(JSON.parse(r.out))
        .map((c) => c.channel_id);
    };
    expect(await ids()).toEqual([channelId]);
    expect(await ids('--state', 'active')).toEqual([channelId]);
    expect(await ids('--state', 'closed')).toEqual([]);
    expect(await ids('--type', 'conversation')).toEqual([channelId]);
    expect(await ids('--type', 'consulting')).toEqual([]);
    expect(await ids('--agent', 'bob')).toEqual([channelId]);
    expect(await ids('--agent', 'carol')).toEqual([]);
  });

  it('shows a channel with its participants by name', async () => {
    const r = await run([...at(), '--as', 'alice', 'channels', 'show', channelId, '--json']);
    const shown = z.looseObject({ channel: ChannelMetadataSchema }).parse(JSON.parse(r.out));
    expect([r.code, shown.channel.participants.map((p) => p.agent_id)]).toEqual([0, [alice.agentId, bob.agentId]]);

    const human = await run([...at(), '--as', 'alice', 'channels', 'show', channelId]);
    expect(human.out).toMatch(/^alice +\S+ +initiator/m);
    expect(human.out).toMatch(/^bob +\S+ +respondent/m);
  });

  it('exits 3 alike for an unknown channel and for a channel the caller is not in', async () => {
    const unknown = await run([...at(), '--as', 'alice', 'channels', 'show', newId()]);
    expect(unknown.code).toBe(3);
    const foreign = await run([...at(), '--as', 'carol', 'wal', channelId]);
    expect([foreign.code, foreign.out]).toEqual([3, '']);
    expect(foreign.err).toContain(`not_found: channel not found: ${channelId}`);
  });

  it('asks for a caller when none is given (exit 2, naming the flags)', async () => {
    const r = await run([...at(), 'channels', 'ls']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--operator');
    expect(r.err).toContain('--as <agent>');
  });
});

describe('ag2net wal and tail', () => {
  it('reads a channel’s log as a participant, in pages', async () => {
    const all = await run([...at(), '--as', 'alice', 'wal', channelId, '--json']);
    const page = z
      .strictObject({
        channel_id: z.string(),
        envelopes: z.array(EnvelopeSchema),
        last_sequence: z.number(),
        next_since: z.number().nullable(),
      })
      .parse(JSON.parse(all.out));
    const texts = page.envelopes.map(text).filter((t) => t === 'hello' || t === 'echo: hello');
    expect([all.code, texts, page.next_since]).toEqual([0, ['hello', 'echo: hello'], null]);

    const first = await run([...at(), '--as', 'alice', 'wal', channelId, '--limit', '1', '--json']);
    const one = z
      .looseObject({ envelopes: z.array(EnvelopeSchema), next_since: z.number().nullable() })
      .parse(JSON.parse(first.out));
    expect([one.envelopes.length, one.envelopes[0]?.sequence, one.next_since]).toEqual([1, 1, 2]);

    const human = await run([...at(), '--as', 'alice', 'wal', channelId]);
    expect(human.out).toMatch(/#\d+ \S+ alice hello$/m);
    expect(human.out).toMatch(/#\d+ \S+ bob echo: hello$/m);
  });

  it('follows a channel and prints an envelope admitted after it started', async () => {
    const follow = start([...at(), '--as', 'alice', 'wal', channelId, '--follow', '--json']);
    await waitFor(() => follow.out().includes('"echo: hello"'), { what: 'the existing log printed' });
    await alice.send(channelId, 'followed');
    await waitFor(() => follow.out().includes('"echo: followed"'), { what: 'the new envelopes followed' });
    const r = await follow.stop();
    const texts = jsonLines(r.out).map((l) => text(EnvelopeSchema.parse(l)));
    expect(r.code).toBe(0);
    expect(texts.filter((t) => t === 'followed' || t === 'echo: followed')).toEqual(['followed', 'echo: followed']);
  });

  it('tails every admitted envelope as the operator', async () => {
    const tail = start([...at(), '--operator', 'tail', '--json', '--type', EV_TEXT, '--max', '2'], { tty: true });
    await waitFor(() => tail.err().includes('following every channel'), { what: 'tail started' });
    await alice.send(channelId, 'tailed');
    const r = await tail.done;
    expect(r.code).toBe(0);
    expect(jsonLines(r.out).map((l) => text(EnvelopeSchema.parse(l)))).toEqual(['tailed', 'echo: tailed']);
  });

  it('refuses tail without operator rights (exit 4)', async () => {
    const r = await run([...at(), 'tail']);
    expect(r.code).toBe(4);
    expect(r.err).toContain('tail is for operators');
    expect(r.err).toContain('hint: pass --operator');
  });
});

describe('ag2net wal: private envelopes', () => {
  it('shows a private envelope to its audience and the operator only', async () => {
    const gina = await client.registerHuman({ name: 'gina' });
    const hank = await client.registerHuman({ name: 'hank' });
    await client.registerHuman({ name: 'ivy' });
    const channel = await gina.open({ type: 'discussion', target: ['hank', 'ivy'] });
    await channel.send('for hank only', { audience: [hank.agentId] });
    const texts = async (...who: string[]): Promise<unknown[]> => {
      const r = await run([...at(), ...who, 'wal', channel.channelId, '--json']);
      expect(r.code).toBe(0);
      return z
        .looseObject({ envelopes: z.array(EnvelopeSchema) })
        .parse(JSON.parse(r.out))
        .envelopes.filter((e) => e.event_type === EV_TEXT)
        .map(text);
    };
    expect(await texts('--as', 'hank')).toEqual(['for hank only']);
    expect(await texts('--as', 'ivy')).toEqual([]);
    expect(await texts('--operator')).toEqual(['for hank only']);
  });
});

describe('ag2net audit', () => {
  const Records = z.array(z.looseObject({ id: z.string(), kind: z.string(), at: z.string() }));

  it('reads the audit trail as the operator, filtered by kind and agent', async () => {
    const all = await run([...at(), '--operator', 'audit', '--json']);
    const kinds = new Set(Records.parse(JSON.parse(all.out)).map((r) => r.kind));
    expect([all.code, kinds.has('agent_registered'), kinds.has('channel_created')]).toEqual([0, true, true]);

    const registered = await run([
      ...at(),
      '--operator',
      'audit',
      '--kind',
      'agent_registered',
      '--agent',
      'bob',
      '--json',
    ]);
    const records = Records.parse(JSON.parse(registered.out));
    expect(records.map((r) => [r.kind, r['agent_id']])).toEqual([['agent_registered', bob.agentId]]);

    const future = await run([...at(), '--operator', 'audit', '--since', '2999-01-01T00:00:00Z', '--json']);
    expect(JSON.parse(future.out)).toEqual([]);
  });

  it('follows the audit trail: a record written after it started is printed once', async () => {
    const follow = start([...at(), '--operator', 'audit', '--kind', 'agent_registered', '--follow', '--json'], {
      tty: true,
    });
    await waitFor(() => follow.err().includes('following the audit trail'), { what: 'audit follows' });
    const erin = await client.registerHuman({ name: 'erin' });
    await waitFor(() => follow.out().includes(erin.agentId), { what: "erin's registration followed" });
    const r = await follow.stop();
    const ids = jsonLines(r.out).map((l) => Records.element.parse(l)['agent_id']);
    expect(r.code).toBe(0);
    expect(ids.filter((id) => id === erin.agentId)).toEqual([erin.agentId]);
    expect(ids).toContain(bob.agentId);
  });

  it('refuses the audit trail without operator rights (exit 4)', async () => {
    const r = await run([...at(), '--as', 'alice', 'audit']);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toContain('audit is for operators');
  });
});

describe('ag2net tasks', () => {
  it('lists and shows the tasks the caller may see', async () => {
    const taskId = newId();
    await client.call(
      'observeTask',
      { task: { task_id: taskId, owner_id: bob.agentId, created_at: new Date().toISOString(), channel_id: channelId } },
      { caller: bob.agentId },
    );
    const ls = await run([...at(), '--as', 'bob', 'tasks', 'ls', '--json']);
    const tasks = z.array(TaskMetadataSchema).parse(JSON.parse(ls.out));
    expect([ls.code, tasks.map((t) => t.task_id)]).toEqual([0, [taskId]]);
    const none = await run([...at(), '--as', 'bob', 'tasks', 'ls', '--state', 'completed', '--json']);
    expect(JSON.parse(none.out)).toEqual([]);
    const show = await run([...at(), '--as', 'bob', 'tasks', 'show', taskId, '--json']);
    expect(TaskMetadataSchema.parse(JSON.parse(show.out)).owner_id).toBe(bob.agentId);
    expect((await run([...at(), '--as', 'bob', 'tasks', 'show', newId()])).code).toBe(3);
  });
});

describe('ag2net chat', () => {
  it('talks to an agent as a person: stdin lines are posts, answers are printed, the channel is closed after', async () => {
    const r = await run([...at(), '--as', 'dave', 'chat', 'bob'], { stdin: ['how are you?'] });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ bob echo: how are you\?$/m);
    const dave = await client.getAgent('dave');
    expect(dave.kind).toBe('human');
    const channels = await client.call('listChannels', { agent_id: dave.agent_id }, { caller: bob.agentId });
    expect(channels.channels.map((c) => [c.manifest.type, c.state])).toEqual([['conversation', 'closed']]);
  });
});

describe('ag2net chat (consulting)', () => {
  it('asks one question in a consulting channel and prints the answer as JSON lines', async () => {
    const r = await run([...at(), '--as', 'frank', 'chat', 'bob', '--type', 'consulting', '--json'], {
      stdin: ['what is 2+2?'],
    });
    expect(r.code).toBe(0);
    const texts = jsonLines(r.out)
      .map((l) => EnvelopeSchema.parse(l))
      .filter((e) => e.event_type === EV_TEXT)
      .map(text);
    expect(texts).toEqual(['echo: what is 2+2?']);
  });

  it('exits 3 for an agent nobody has', async () => {
    const r = await run([...at(), '--as', 'frank', 'chat', 'nobody'], { stdin: ['hi'] });
    expect(r.code).toBe(3);
  });
});

describe('usage and availability', () => {
  it('exits 2 on bad usage', async () => {
    expect((await run([...at(), 'wal'])).code).toBe(2);
    expect((await run([...at(), 'frobnicate'])).code).toBe(2);
    const badState = await run([...at(), '--as', 'alice', 'channels', 'ls', '--state', 'sleeping']);
    expect(badState.code).toBe(2);
    expect(badState.err).toContain('invalid argument');
    expect((await run([...at(), '--timeout', 'soon', 'health'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
    expect((await run(['--help'])).code).toBe(0);
  });

  it('exits 5 when no hub serves the prefix, and names the fix', async () => {
    const r = await run(['--server', nats.url, '--prefix', uniqueName('nohub'), '--timeout', '500', 'health']);
    expect(r.code).toBe(5);
    expect(r.err).toContain('hint: check that nats-server and hub-service run');
  });

  it('reads NATS_URL and AG2NET_PREFIX from the environment', async () => {
    const r = await run(['health', '--json'], { env: { NATS_URL: nats.url, AG2NET_PREFIX: prefix } });
    expect([r.code, HealthSchema.parse(JSON.parse(r.out)).role]).toEqual([0, 'active']);
  });
});
