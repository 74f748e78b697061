import { HubClient, type AgentClient, type HumanClient } from '@ag2net/client';
import { startHub, type Hub } from '@ag2net/hub';
import {
  ChannelMetadataSchema,
  EV_TEXT,
  EnvelopeSchema,
  HealthSchema,
  OPERATOR_CALLER,
  PassportSchema,
  TaskMetadataSchema,
  newId,
} from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { shortTime } from '../src/render.js';
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

describe('verbs without a subcommand', () => {
  it('agents, channels and tasks list, with the list’s own flags', async () => {
    const agents = await run([...at(), 'agents']);
    expect([agents.code, agents.out]).toEqual([0, (await run([...at(), 'agents', 'ls'])).out]);
    expect(agents.out.split('\n')[0]).toMatch(/^NAME +ID +KIND +MODEL +OWNER +REGISTERED$/);
    const humans = await run([...at(), 'agents', '--kind', 'human', '--json']);
    expect(humans.out).toBe((await run([...at(), 'agents', 'ls', '--kind', 'human', '--json'])).out);
    const channels = await run([...at(), '--as', 'alice', 'channels', '--json']);
    expect([channels.code, z.array(ChannelMetadataSchema).parse(JSON.parse(channels.out)).length]).toEqual([0, 1]);
    const tasks = await run([...at(), '--as', 'bob', 'tasks', '--json']);
    expect([tasks.code, tasks.out]).toEqual([0, (await run([...at(), '--as', 'bob', 'tasks', 'ls', '--json'])).out]);
  });

  it('auth, creds and people say which subcommand to use (exit 2)', async () => {
    expect(await run(['auth'])).toEqual({
      code: 2,
      out: '',
      err: 'ag2net: auth needs a subcommand\nhint: use `ag2net auth init` to lay out an auth directory\n',
    });
    const creds = await run(['creds']);
    expect([creds.code, creds.err]).toEqual([
      2,
      'ag2net: creds needs a subcommand\nhint: use `ag2net creds issue --agent <name>`, `ag2net creds revoke ' +
        '--agent <name>` or `ag2net creds readmit --agent <name>`\n',
    ]);
    const unknown = await run(['creds', 'bogus']);
    expect([unknown.code, unknown.err.split('\n')[0]]).toEqual([2, 'ag2net: unknown command: creds bogus']);
    const people = await run(['people']);
    expect([people.code, people.err]).toEqual([
      2,
      'ag2net: people needs a subcommand\nhint: use `ag2net people add <name>` to admit a person\n',
    ]);
  });
});

describe('ids by the start of one', () => {
  it('wal, channels show, tasks show and --channel take a unique start of an id', async () => {
    const start = channelId.slice(0, 20);
    const wal = await run([...at(), '--as', 'alice', 'wal', start, '--json']);
    expect([wal.code, z.looseObject({ channel_id: z.string() }).parse(JSON.parse(wal.out)).channel_id]).toEqual([
      0,
      channelId,
    ]);
    const show = await run([...at(), '--as', 'alice', 'channels', 'show', start.toLowerCase(), '--json']);
    expect(z.looseObject({ channel: ChannelMetadataSchema }).parse(JSON.parse(show.out)).channel.channel_id).toBe(
      channelId,
    );
    const [task] = z
      .array(TaskMetadataSchema)
      .parse(JSON.parse((await run([...at(), '--as', 'bob', 'tasks', 'ls', '--json'])).out));
    if (task === undefined) throw new Error('no task');
    const shown = await run([...at(), '--as', 'bob', 'tasks', 'show', task.task_id.slice(0, 20), '--json']);
    expect(TaskMetadataSchema.parse(JSON.parse(shown.out)).task_id).toBe(task.task_id);
    const ofChannel = await run([...at(), '--as', 'bob', 'tasks', 'ls', '--channel', start, '--json']);
    expect(
      z
        .array(TaskMetadataSchema)
        .parse(JSON.parse(ofChannel.out))
        .map((t) => t.task_id),
    ).toEqual([task.task_id]);
  });

  it('an agent by name, id or the start of an id, wherever one is taken', async () => {
    const byStart = await run([...at(), 'agents', 'show', bob.agentId.slice(0, 20), '--json']);
    expect(z.looseObject({ passport: PassportSchema }).parse(JSON.parse(byStart.out)).passport.name).toBe('bob');
    const filtered = await run([...at(), '--as', 'alice', 'channels', 'ls', '--agent', bob.agentId.slice(0, 20)]);
    expect(filtered.out).toContain(channelId);
    const chat = await run([...at(), '--as', 'quinn', 'chat', bob.agentId.slice(0, 20)], { stdin: ['by id'] });
    expect([chat.code, /bob echo: by id$/m.test(chat.out)]).toEqual([0, true]);
  });

  it('an ambiguous start lists the candidates, at most 10 (exit 2); an unknown one is not found (exit 3)', async () => {
    // Eleven channels more, so that the start every id shares is ambiguous among more than ten.
    const pat = await client.registerHuman({ name: 'pat' });
    for (let i = 0; i < 11; i += 1) await pat.open({ type: 'conversation', target: 'bob' });
    const all = await client.call(
      'listChannels',
      { agent_id: null, state: null, limit: 1000, cursor: null },
      { caller: OPERATOR_CALLER },
    );
    const shared = channelId.slice(0, 1);
    const r = await run([...at(), '--operator', 'wal', shared]);
    const lines = r.err.trimEnd().split('\n');
    expect([r.code, r.out, lines[0], lines.length]).toEqual([
      2,
      '',
      `ag2net: ${shared} is ambiguous: ${all.channels.length} channels have an id that starts with it:`,
      13,
    ]);
    expect(lines[1]).toBe(`  ${channelId}  conversation active alice, bob`);
    expect(lines.slice(11)).toEqual([`  … and ${all.channels.length - 10} more`, 'hint: give more of the channel id']);

    const unknown = await run([...at(), '--as', 'alice', 'wal', 'ZZZZ']);
    expect(unknown).toEqual({
      code: 3,
      out: '',
      err: 'ag2net: channel not found: ZZZZ\nhint: no channel the caller may see has an id that starts with ZZZZ: `ag2net channels ls` lists them\n',
    });
    const agents = await run([...at(), 'agents', 'show', shared]);
    expect([agents.code, agents.err.split('\n')[0]]).toEqual([
      2,
      expect.stringMatching(
        new RegExp(`^ag2net: ${shared} is ambiguous: \\d+ agents have an id that starts with it:$`),
      ),
    ]);
  });
});

describe('names in what people read', () => {
  it('a workflow’s graph, its adapter state and its log name the agents', async () => {
    const graph = {
      initial_speaker: 'alice',
      transitions: [
        { when: { name: 'from_speaker', args: { agent_id: 'bob' } }, then: { name: 'revert_to_initiator', args: {} } },
        {
          when: { name: 'from_speaker', args: { agent_id: 'alice' } },
          then: { name: 'agent', args: { agent_id: 'bob' } },
        },
      ],
      default_target: { name: 'terminate', args: { reason: 'done' } },
      max_turns: 4,
    };
    const channel = await alice.open({ type: 'workflow', target: 'bob', knobs: { graph } });
    await channel.send('to bob');
    await waitFor(async () => (await alice.readWal(channel.channelId)).some((e) => text(e) === 'echo: to bob'), {
      what: "bob's turn",
    });
    const show = await run([...at(), '--as', 'alice', 'channels', 'show', channel.channelId]);
    expect(show.code).toBe(0);
    const section = show.out.slice(show.out.indexOf('\ngraph\n') + 1, show.out.indexOf('\n\nNAME'));
    expect(section.split('\n')).toEqual([
      'graph',
      '  starts with alice',
      '  1. from_speaker bob    → revert_to_initiator',
      '  2. from_speaker alice  → bob',
      '  otherwise              → terminate (done)',
      '  at most 4 turns',
    ]);
    const state = show.out.slice(show.out.indexOf('adapter state'));
    expect([state.includes('"alice"'), state.includes(alice.agentId), state.includes(bob.agentId)]).toEqual([
      true,
      false,
      false,
    ]);
    const wal = await run([...at(), '--as', 'alice', 'wal', channel.channelId]);
    expect(wal.out).toMatch(/ alice to bob$/m);
    expect([wal.out.includes(alice.agentId), wal.out.includes(bob.agentId)]).toEqual([false, false]);
  });

  it('the audit trail names agents', async () => {
    const r = await run([...at(), '--operator', 'audit', '--kind', 'agent_registered', '--agent', 'bob']);
    expect(r.out).toMatch(/^\S+ agent_registered agent=bob /m);
    expect(r.out).not.toContain(bob.agentId);
  });

  it('channels ls says when each channel ends and why it closed, in two columns', async () => {
    const r = await run([...at(), '--operator', 'channels', 'ls']);
    const json = z
      .array(ChannelMetadataSchema)
      .parse(JSON.parse((await run([...at(), '--operator', 'channels', 'ls', '--json'])).out));
    const [header, ...rows] = r.out.trimEnd().split('\n');
    expect(header).toMatch(/^ID +TYPE +STATE +PARTICIPANTS +CREATED +ENDS +REASON$/);
    const closed = json.find((c) => c.state === 'closed');
    const open = json.find((c) => c.state === 'active' && c.expires_at !== null);
    if (closed === undefined || open === undefined) throw new Error('no closed or open channel');
    const row = (id: string) => rows.find((l) => l.startsWith(id)) ?? '';
    expect(row(closed.channel_id)).toMatch(new RegExp(` ${shortTime(closed.closed_at)} +${closed.close_reason}$`));
    expect(row(open.channel_id)).toMatch(new RegExp(` ${shortTime(open.expires_at)} +-$`));
  });

  it('agents ls shows the passport’s model, and scripted for the scripted model', async () => {
    await client.register({ name: 'scripted-bot', provider: 'scripted', model: 'demo' });
    await client.register({ name: 'hosted-bot', provider: 'openai', model: 'gpt-4o-mini' });
    const r = await run([...at(), 'agents', 'ls']);
    expect(r.out).toMatch(/^scripted-bot +\S+ +agent +scripted +/m);
    expect(r.out).toMatch(/^hosted-bot +\S+ +agent +openai\/gpt-4o-mini +/m);
    expect(r.out).toMatch(/^alice +\S+ +human +- +/m);
  });
});
