import { HubClient, type AgentClient, type Channel, type HumanClient, type Subscription } from '@ag2net/client';
import { EV_TEXT, hubNames, newId, partitionOf, replyEnvelopeId, type Envelope } from '@ag2net/protocol';
import { uniqueName, waitFor, within } from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { startHubService, startRunner, type ServiceProcess } from './support/processes.js';
import { PYTHON_REQUIRED, pythonWithAg2net, startPythonParty, type PythonParty } from './support/python.js';

// Cross-language scenarios: the Python client (clients/python) and the TypeScript client in the same channels of a
// real hub-service process. Python parties run as their own processes (scripts/interop_party.py).
const python = pythonWithAg2net();
const stack = fileStack();
const parties: PythonParty[] = [];
afterAll(async () => {
  await Promise.all(parties.splice(0).map((p) => p.kill()));
});

function party(prefix: string, args: readonly string[]): PythonParty {
  if (python === null) throw new Error('no Python with ag2net (set AG2NET_PYTHON or run .ci/run)');
  const started = startPythonParty({ python, natsUrl: stack.url, prefix, args });
  parties.push(started);
  return started;
}

/** Starts a Python party that registers an agent (`what` in the timeout error); resolves once it is ready, with its id. */
async function readyParty(
  prefix: string,
  args: readonly string[],
  what = 'the Python agent',
): Promise<{ party: PythonParty; agentId: string }> {
  const started = party(prefix, args);
  const ready = await within(
    started.line((l) => l.event === 'ready'),
    30_000,
    what,
  );
  return { party: started, agentId: String(ready['agent_id']) };
}

/**
 * A TypeScript agent that answers the trigger of each of its turns with `ts:<text>`, after `beforeAnswer` (if given)
 * resolved.
 */
async function tsAgent(
  hub: HubClient,
  name: string,
  beforeAnswer?: (trigger: Envelope) => Promise<void>,
): Promise<AgentClient> {
  return hub.register(
    { name },
    {
      handler: async (envelope, me) => {
        if (envelope.event_type === 'ag2.channel.invite' && envelope.sender_id !== me.agentId) {
          await me.sendEnvelope({
            channel_id: envelope.channel_id,
            event_type: 'ag2.channel.invite.ack',
            event_data: { channel_id: envelope.channel_id },
            causation_id: envelope.envelope_id,
          });
          return;
        }
        // Answer only the trigger of its own turn (a discussion moves on while a delivery waits its turn).
        if (envelope.event_type !== EV_TEXT || !(await me.isMyTurn(envelope))) return;
        await beforeAnswer?.(envelope);
        await me.sendEnvelope({
          channel_id: envelope.channel_id,
          event_type: EV_TEXT,
          event_data: { text: `ts:${String(envelope.event_data['text'])}` },
          causation_id: envelope.envelope_id,
          envelope_id: replyEnvelopeId(me.agentId, envelope.envelope_id),
        });
      },
    },
  );
}

const hubs = new Map<string, ServiceProcess>();

function startHub(prefix: string, hubId: string, extraArgs: readonly string[] = []): void {
  hubs.set(hubId, stack.track(startHubService({ natsUrl: stack.url, prefix, hubId, leaseTtlMs: 1500, extraArgs })));
}

async function servingHub(hub: HubClient): Promise<string> {
  return waitFor(async () => (await hub.health({ timeout: 1000 })).hub_id, { timeoutMs: 20_000, what: 'a hub' });
}

/** Sends each round's text as `person` in `channel`, each once `lastSpeaker` answered the round before. */
async function discussRounds(
  person: HumanClient,
  channel: Channel,
  discussion: { readonly rounds: readonly string[]; readonly lastSpeaker: string },
): Promise<void> {
  for (const round of discussion.rounds) {
    const last = person.nextEnvelope({
      predicate: (e) =>
        e.channel_id === channel.channelId && e.event_type === EV_TEXT && e.sender_id === discussion.lastSpeaker,
      timeout: 30_000,
    });
    await channel.send(round);
    await last;
  }
}

function texts(log: readonly Envelope[]): { sender: string; text: unknown; causation: string | null }[] {
  return log
    .filter((e) => e.event_type === EV_TEXT)
    .map((e) => ({ sender: e.sender_id, text: e.event_data['text'], causation: e.causation_id }));
}

describe.skipIf(python === null && !PYTHON_REQUIRED)('Python and TypeScript clients on one hub', () => {
  const prefix = uniqueName('pyx');

  beforeAll(async () => {
    startHub(prefix, 'solo');
    await servingHub(await HubClient.connect({ connection: stack.nc, prefix }));
  }, 30_000);

  it('a Python agent answers a TypeScript person in a consulting channel, under its reply id', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const { agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-consultant']);

    const person = await hub.registerHuman({ name: uniqueName('ts-person') });
    const channel = await person.open({ type: 'consulting', target: 'py-consultant' });
    const answer = person.nextEnvelope({
      predicate: (e) => e.channel_id === channel.channelId && e.event_type === EV_TEXT && e.sender_id === pyId,
      timeout: 30_000,
    });
    const ended = person.waitForChannelEvent(channel.channelId, { timeout: 30_000 });
    const question = await channel.send('What is 6*7?');
    const reply = await answer;

    expect(reply).toMatchObject({
      sender_id: pyId,
      event_data: { text: 'py:What is 6*7?' },
      causation_id: question,
      envelope_id: replyEnvelopeId(pyId, question),
    });
    expect((await ended)?.event_data).toEqual({ reason: 'consulting_complete', channel_id: channel.channelId });
  }, 60_000);

  it('a turn lock held by a TypeScript replica keeps the Python replica from running the turn until released', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const { party: agent, agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-replica']);
    const person = await hub.registerHuman({ name: uniqueName('ts-person') });
    const channel = await person.open({ type: 'conversation', target: 'py-replica' });
    // What a TypeScript replica of the same agent does around its turn (TurnLocks): acquireTurnLock as the agent,
    // under its own holder id, here with a TTL no slow machine reaches before the Python replica found it held.
    const lock = { channel_id: channel.channelId, holder: 'tsreplica' };
    expect(await hub.call('acquireTurnLock', { ...lock, ttl_ms: 120_000 }, { caller: pyId })).toEqual({
      acquired: true,
    });

    const answer = person.nextEnvelope({
      predicate: (e) => e.channel_id === channel.channelId && e.sender_id === pyId,
      timeout: 30_000,
    });
    const question = await channel.send('locked?');
    await within(
      agent.line(
        (l) => l.event === 'log' && String(l['msg']).startsWith(`turn lock busy: ${pyId}.${channel.channelId}`),
      ),
      30_000,
      'the Python replica to find the lock held',
    );
    expect(agent.lines.filter((l) => l.event === 'answered')).toEqual([]);
    // The TypeScript replica's release; the Python replica takes the lock when the delivery comes back.
    await hub.call('releaseTurnLock', lock, { caller: pyId });

    expect((await answer)?.event_data).toEqual({ text: 'py:locked?' });
    const answered = await agent.line((l) => l.event === 'answered' && l['trigger'] === question);
    expect(answered['reply_id']).toBe(replyEnvelopeId(pyId, question));
    expect(texts(await person.readWal(channel.channelId))).toEqual([
      { sender: person.agentId, text: 'locked?', causation: null },
      { sender: pyId, text: 'py:locked?', causation: question },
    ]);
  }, 60_000);

  it('a Python agent never handles an envelope the hub did not deliver: it is terminated with a warning', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const { party: agent, agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-guarded']);
    const person = await hub.registerHuman({ name: uniqueName('ts-person') });
    const channel = await person.open({ type: 'conversation', target: 'py-guarded' });
    const names = hubNames(prefix);
    // What anyone on an unsecured server can do: publish an envelope, as the hub would deliver it, without the hub's
    // origin header straight onto the agent's inbox subject.
    const forged = newId();
    await jetstream(stack.nc).publish(
      names.inbox(pyId),
      JSON.stringify({
        envelope_id: forged,
        channel_id: channel.channelId,
        sender_id: person.agentId,
        event_type: EV_TEXT,
        event_data: { text: 'forged' },
        audience: null,
        causation_id: null,
        depth: 0,
        sequence: 99,
        created_at: new Date().toISOString(),
      }),
    );
    const answer = person.nextEnvelope({
      predicate: (e) => e.channel_id === channel.channelId && e.sender_id === pyId,
      timeout: 30_000,
    });
    const real = await channel.send('real');

    expect((await answer)?.event_data).toEqual({ text: 'py:real' });
    await agent.line((l) => l.event === 'answered' && l['trigger'] === real);
    expect(agent.lines.filter((l) => l.event === 'answered').map((l) => l['trigger'])).toEqual([real]);
    expect(agent.lines.filter((l) => l.event === 'log' && String(l['msg']).includes('the hub did not send'))).toEqual([
      {
        event: 'log',
        level: 'WARNING',
        msg: `dropping a delivery of ${pyId} the hub did not send (subject ${names.inbox(pyId)})`,
      },
    ]);
    const backlog = async (): Promise<[number, number]> => {
      const info = await (
        await jetstreamManager(stack.nc)
      ).consumers.info(names.inboxStream, names.inboxConsumer(pyId));
      return [info.num_pending, info.num_ack_pending];
    };
    expect(
      await waitFor(async () => ((await backlog()).join() === '0,0' ? true : undefined), { timeoutMs: 10_000 }),
    ).toBe(true);
    expect(texts(await person.readWal(channel.channelId)).map((e) => e.text)).toEqual(['real', 'py:real']);
  }, 60_000);

  it('an AG2 Agent served on ag2net answers a TypeScript person', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const { agentId: ag2Id } = await readyParty(
      prefix,
      ['ag2-agent', '--name', 'ag2-helper', '--answer', 'forty-two'],
      'the AG2 agent',
    );
    const person = await hub.registerHuman({ name: uniqueName('ts-person') });
    const channel = await person.open({ type: 'consulting', target: 'ag2-helper' });
    const ended = person.waitForChannelEvent(channel.channelId, { timeout: 30_000 });
    const question = await channel.send('What is 6*7?');

    expect((await ended)?.event_data).toEqual({ reason: 'consulting_complete', channel_id: channel.channelId });
    expect(texts(await person.readWal(channel.channelId))).toEqual([
      { sender: person.agentId, text: 'What is 6*7?', causation: null },
      { sender: ag2Id, text: 'forty-two', causation: question },
    ]);
    expect((await person.readWal(channel.channelId)).at(-2)?.envelope_id).toBe(replyEnvelopeId(ag2Id, question));
  }, 60_000);

  it('a Python person consults a TypeScript agent', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const agent = await tsAgent(hub, 'ts-expert');
    const person = party(prefix, ['consult', '--name', 'py-person', '--target', 'ts-expert', '--text', 'hi from py']);
    const line = await within(
      person.line((l) => l.event === 'answer'),
      45_000,
      'the Python person',
    );

    expect(line).toMatchObject({
      text: 'ts:hi from py',
      reply_id: replyEnvelopeId(agent.agentId, String(line['question'])),
      causation_id: line['question'],
      closed: 'consulting_complete',
    });
    expect(await person.exited).toBe(0);
    await agent.disconnect();
  }, 60_000);

  it('a Python agent, a TypeScript agent and a person discuss in turn', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const { agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-discussant']);
    const ts = await tsAgent(hub, 'ts-discussant');
    const person = await hub.registerHuman({ name: uniqueName('moderator') });
    const channel = await person.open({ type: 'discussion', target: ['py-discussant', 'ts-discussant'] });

    await discussRounds(person, channel, { rounds: ['round 1', 'round 2'], lastSpeaker: ts.agentId });
    const log = texts(await person.readWal(channel.channelId));

    expect(log.map(({ sender, text }) => ({ sender, text }))).toEqual([
      { sender: person.agentId, text: 'round 1' },
      { sender: pyId, text: 'py:round 1' },
      { sender: ts.agentId, text: 'ts:py:round 1' },
      { sender: person.agentId, text: 'round 2' },
      { sender: pyId, text: 'py:round 2' },
      { sender: ts.agentId, text: 'ts:py:round 2' },
    ]);
    await ts.disconnect();
  }, 60_000);

  it('the quick start agent of the Python README posts only on its turns in a discussion with a TypeScript person and agent', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    const { party: agent, agentId: pyId } = await readyParty(prefix, ['readme-agent', '--name', 'py-echo']);
    let channelId = '';
    let tsAnswers = 0;
    const held = { holder: 'the-test', ttl_ms: 120_000 };
    // Before its second answer the TypeScript agent takes the Python agent's turn lock, so that this answer waits in
    // the Python agent's inbox until the person's round 3 came after it: the Python agent may then send (canSend)
    // while that older delivery is not the trigger of its turn.
    const ts = await tsAgent(hub, 'ts-echo-peer', async () => {
      tsAnswers += 1;
      if (tsAnswers !== 2) return;
      await waitFor(
        async () => (await hub.call('acquireTurnLock', { channel_id: channelId, ...held }, { caller: pyId })).acquired,
        { timeoutMs: 10_000, what: "the Python agent's turn lock" },
      );
    });
    const person = await hub.registerHuman({ name: uniqueName('chair') });
    const channel = await person.open({ type: 'discussion', target: ['py-echo', 'ts-echo-peer'] });
    channelId = channel.channelId;
    const fromTs = (e: Envelope): boolean =>
      e.channel_id === channel.channelId && e.event_type === EV_TEXT && e.sender_id === ts.agentId;

    for (const round of ['round 1', 'round 2', 'round 3']) {
      const last = person.nextEnvelope({ predicate: fromTs, timeout: 30_000 });
      const from = agent.lines.length;
      await channel.send(round);
      if (round === 'round 3') {
        // The Python agent hands back what reaches it while the lock is held (that answer, then round 3); once
        // round 3 is in the channel, it gets the lock.
        await within(
          agent.line((l) => agent.lines.indexOf(l) >= from && String(l['msg']).startsWith(`turn lock busy: ${pyId}.`)),
          30_000,
          'the Python agent to find its lock held',
        );
        await hub.call('releaseTurnLock', { channel_id: channel.channelId, holder: held.holder }, { caller: pyId });
      }
      await last;
    }
    const wal = (await person.readWal(channel.channelId)).filter((e) => e.event_type === EV_TEXT);

    expect(texts(wal).map(({ sender, text }) => ({ sender, text }))).toEqual(
      ['round 1', 'round 2', 'round 3'].flatMap((round) => [
        { sender: person.agentId, text: round },
        { sender: pyId, text: `echo: ${round}` },
        { sender: ts.agentId, text: `ts:echo: ${round}` },
      ]),
    );
    // Each answer of the Python agent answers the person's text of its round, under its reply id.
    expect([1, 4, 7].map((i) => [wal[i]?.causation_id, wal[i]?.envelope_id])).toEqual(
      [0, 3, 6].map((i) => [wal[i]?.envelope_id, replyEnvelopeId(pyId, wal[i]?.envelope_id ?? '')]),
    );
    // It never posted out of turn: no hub error reached its handler, no turn failed.
    expect(agent.lines.filter((l) => l.event === 'refused' || (l.event === 'log' && l['level'] === 'ERROR'))).toEqual(
      [],
    );
    await ts.disconnect();
  }, 90_000);

  it('a Python agent, a runner-hosted TypeScript agent and a person discuss in turn', async () => {
    const hub = await HubClient.connect({ connection: stack.nc, prefix });
    stack.track(
      startRunner({ natsUrl: stack.url, prefix, configPath: 'test/fixtures/e2e/python-panel.yaml', name: 'runner' }),
    );
    const { agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-panelist']);
    const runnerId = await waitFor(async () => (await hub.findAgentId('runner-panelist')) ?? undefined, {
      timeoutMs: 30_000,
      what: 'the runner to register its agent',
    });
    const person = await hub.registerHuman({ name: uniqueName('chair') });
    const channel = await person.open({ type: 'discussion', target: ['py-panelist', 'runner-panelist'] });

    await discussRounds(person, channel, { rounds: ['round 1', 'round 2'], lastSpeaker: runnerId });
    const wal = (await person.readWal(channel.channelId)).filter((e) => e.event_type === EV_TEXT);
    const id = (i: number): string | undefined => wal[i]?.envelope_id;

    expect(texts(wal).map(({ sender, text }) => ({ sender, text }))).toEqual([
      { sender: person.agentId, text: 'round 1' },
      { sender: pyId, text: 'py:round 1' },
      { sender: runnerId, text: 'first answer' },
      { sender: person.agentId, text: 'round 2' },
      { sender: pyId, text: 'py:round 2' },
      { sender: runnerId, text: 'second answer' },
    ]);
    // The Python agent answers the person's message of each round, under its reply id.
    expect([wal[1], wal[4]].map((e) => [e?.causation_id, e?.envelope_id])).toEqual([
      [id(0), replyEnvelopeId(pyId, id(0) ?? '')],
      [id(3), replyEnvelopeId(pyId, id(3) ?? '')],
    ]);
  }, 90_000);
});

describe.skipIf(python === null && !PYTHON_REQUIRED)('Python agent across a hub failover', () => {
  it('answers every question exactly once while the active hub is killed during its turn', async () => {
    const prefix = uniqueName('pyfo');
    startHub(prefix, 'hub-a');
    const hub = await HubClient.connect({ connection: stack.nc, prefix, retryForMs: 30_000 });
    await servingHub(hub);
    startHub(prefix, 'hub-b');
    // The Python agent waits 1 s inside each turn, so the hub dies between the question and the answer.
    const { agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-survivor', '--delay', '1']);
    const person = await hub.registerHuman({ name: uniqueName('asker') });
    const channel = await person.open({ type: 'conversation', target: 'py-survivor' });

    const questions: string[] = [];
    for (const text of ['m1', 'm2', 'm3']) {
      const answer = person.nextEnvelope({
        predicate: (e) =>
          e.channel_id === channel.channelId && e.sender_id === pyId && e.event_data['text'] === `py:${text}`,
        timeout: 45_000,
      });
      questions.push(await channel.send(text));
      if (text === 'm2') {
        // Only the active hub process dies (SIGKILL: no lease release); NATS stays up.
        await hubs.get(await servingHub(hub))?.stop('SIGKILL');
      }
      await answer;
    }
    const log = texts(await person.readWal(channel.channelId));

    expect(log).toEqual([
      { sender: person.agentId, text: 'm1', causation: null },
      { sender: pyId, text: 'py:m1', causation: questions[0] },
      { sender: person.agentId, text: 'm2', causation: null },
      { sender: pyId, text: 'py:m2', causation: questions[1] },
      { sender: person.agentId, text: 'm3', causation: null },
      { sender: pyId, text: 'py:m3', causation: questions[2] },
    ]);
    expect((await hub.health()).hub_id).toBe('hub-b');
  }, 90_000);
});

/** What `subscription` received so far and until nothing more came for `quietMs`; closes it. */
async function drain(subscription: Subscription, quietMs = 1000): Promise<Envelope[]> {
  const received: Envelope[] = [];
  for (;;) {
    const next = await subscription.receive({ timeout: quietMs }).catch(() => null);
    if (next === null) break;
    received.push(next);
  }
  subscription.close();
  return received;
}

describe.skipIf(python === null && !PYTHON_REQUIRED)('Python and TypeScript clients on a partitioned prefix', () => {
  it("talk both ways in channels of every partition, each request sent to its channel's partition", async () => {
    const PARTITIONS = 4;
    const prefix = uniqueName('pyparts');
    const names = hubNames(prefix, PARTITIONS);
    const partitions = ['--partitions', String(PARTITIONS)];
    // Two hub processes share the partitions; each serves only the subjects of the partitions it owns.
    startHub(prefix, 'parts-a', partitions);
    const hub = await HubClient.connect({ connection: stack.nc, prefix, retryForMs: 30_000 });
    await servingHub(hub);
    startHub(prefix, 'parts-b', partitions);
    const operator = await HubClient.connect({ connection: stack.nc, prefix, operator: true });
    await waitFor(
      async () => {
        const roster = await operator.hubs();
        const held = roster.map((h) => h.held.map((p) => p.partition));
        const all = held.flat().sort();
        return roster.length === 2 && held.every((h) => h.length > 0) && all.join() === '0,1,2,3' ? true : undefined;
      },
      { timeoutMs: 20_000, what: 'two hubs sharing the 4 partitions' },
    );

    // The Python parties are not told the partition count: they ask the hub.
    const { party: agent, agentId: pyId } = await readyParty(prefix, ['agent', '--name', 'py-parted']);
    const ts = await tsAgent(hub, 'ts-parted');
    const pyPerson = party(prefix, [
      'converse',
      ...['--name', 'py-parted-person', '--target', 'ts-parted', '--text', 'py asks', '--spread', '3'],
    ]);

    // A TypeScript person opens one channel with the Python agent in each partition, under ids it minted.
    const person = await hub.registerHuman({ name: uniqueName('ts-parted-person') });
    const fromPy = person.subscribe({ predicate: (e) => e.event_type === EV_TEXT && e.sender_id === pyId });
    const minted = new Map<number, string>();
    while (minted.size < PARTITIONS) {
      const id = newId();
      if (!minted.has(partitionOf(id, PARTITIONS))) minted.set(partitionOf(id, PARTITIONS), id);
    }
    const tsChannels = [...minted.entries()].sort(([a], [b]) => a - b).map(([, id]) => id);
    const questions = new Map<string, string>();
    for (const [k, channelId] of tsChannels.entries()) {
      await hub.call(
        'createChannel',
        { channel_id: channelId, type: 'conversation', participants: [pyId], knobs: {}, labels: {} },
        { caller: person.agentId, timeout: 60_000 },
      );
      const answer = person.nextEnvelope({
        predicate: (e) => e.channel_id === channelId && e.event_type === EV_TEXT && e.sender_id === pyId,
        timeout: 30_000,
      });
      questions.set(channelId, await (await person.channel(channelId)).send(`ts asks ${k}`));
      expect((await answer)?.event_data).toEqual({ text: `py:ts asks ${k}` });
    }

    // The Python person's channels with the TypeScript agent, until they cover 3 partitions.
    const done = await within(
      pyPerson.line((l) => l.event === 'done'),
      30_000,
      'the Python person',
    );
    expect(await pyPerson.exited).toBe(0);
    expect(pyPerson.lines.find((l) => l.event === 'partitions')).toEqual({ event: 'partitions', count: PARTITIONS });
    const answers = pyPerson.lines.filter((l) => l.event === 'answer');
    const pyChannels = answers.map((l) => String(l['channel_id']));
    expect(new Set(answers.map((l) => l['partition'])).size).toBeGreaterThanOrEqual(3);
    expect(answers).toEqual(
      answers.map((l, i) => ({
        event: 'answer',
        channel_id: pyChannels[i],
        partition: partitionOf(pyChannels[i] ?? '', PARTITIONS),
        question: l['question'],
        text: `ts:py asks ${i + 1}`,
        reply_id: replyEnvelopeId(ts.agentId, String(l['question'])),
        causation_id: l['question'],
      })),
    );
    // Each side received each answer once.
    expect(done['texts']).toEqual(Object.fromEntries(pyChannels.map((id, i) => [id, [`ts:py asks ${i + 1}`]])));
    expect((await drain(fromPy)).map((e) => [e.channel_id, e.event_data['text']])).toEqual(
      tsChannels.map((id, k) => [id, `py:ts asks ${k}`]),
    );
    expect(
      agent.lines.filter((l) => l.event === 'answered').map((l) => [l['channel_id'], l['trigger'], l['reply_id']]),
    ).toEqual(tsChannels.map((id) => [id, questions.get(id), replyEnvelopeId(pyId, questions.get(id) ?? '')]));

    // Every channel's log is on its partition's WAL subject alone, exactly what its participants read.
    const jsm = await jetstreamManager(stack.nc);
    const pyPersonId = String(done['agent_id']);
    const channels = [
      ...tsChannels.map((id) => ({ id, reader: person, asker: person.agentId, answerer: pyId, label: 'py' })),
      ...pyChannels.map((id) => ({ id, reader: ts, asker: pyPersonId, answerer: ts.agentId, label: 'ts' })),
    ];
    for (const [i, { id, reader, asker, answerer, label }] of channels.entries()) {
      const question = i < tsChannels.length ? `ts asks ${i}` : `py asks ${i - tsChannels.length + 1}`;
      const subject = `${prefix}.wal.${partitionOf(id, PARTITIONS)}.${id}`;
      expect(names.wal(id)).toBe(subject);
      const wal = await reader.readWal(id);
      const stored = await jsm.streams.info(names.walStream, { subjects_filter: `${prefix}.wal.*.${id}` });
      expect(stored.state.subjects).toEqual({ [subject]: wal.length });
      expect((await storedOn(names.walStream, subject, wal.length)).map((e) => e.envelope_id)).toEqual(
        wal.map((e) => e.envelope_id),
      );
      expect(texts(wal).map(({ sender, text }) => ({ sender, text }))).toEqual([
        { sender: asker, text: question },
        { sender: answerer, text: `${label}:${question}` },
      ]);
    }
    await ts.disconnect();
  }, 60_000);
});

/** The first `count` envelopes stored on `subject` of the stream `stream`, in order. */
async function storedOn(stream: string, subject: string, count: number): Promise<Envelope[]> {
  const out: Envelope[] = [];
  if (count === 0) return out;
  const consumer = await jetstream(stack.nc).consumers.get(stream, { filter_subjects: subject });
  const messages = await consumer.consume();
  try {
    for await (const m of messages) {
      out.push(m.json<Envelope>());
      if (out.length >= count) break;
    }
  } finally {
    messages.stop();
  }
  return out;
}
