import { CONSULTING_TYPE } from '@ag2net/adapters';
import type { HubRpc } from '@ag2net/client';
import { EV_CHANNEL_CLOSED, EV_TEXT, hubNames, type Envelope } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SLOW_TOOL_MARK, SLOW_TOOL_MS } from '../fixtures/slow-tools.js';
import { RunnerProcess } from '../load/runner-process.js';
import type { RunnerTakeoverResult, RunnerTakeoverRunResult } from '../results.js';
import { round, spreadOf } from '../stats.js';
import type { ScenarioContext } from './context.js';
import { startHubIn } from './hub-hosts.js';

const CONFIG = fileURLToPath(new URL('../fixtures/takeover-agents.yaml', import.meta.url));
const AGENT = 'slowpoke';
const QUESTION = 'What are logs?';
const ANSWER = 'Logs are append-only.';
/** How long a runner may take to start and host the agent, ms. */
const START_TIMEOUT_MS = 60_000;
/** How long a turn may take to start after the question, ms. */
const TURN_START_TIMEOUT_MS = 30_000;
/** The scenario fails when the survivor has not answered this long after the kill, ms. */
const ANSWER_TIMEOUT_MS = 60_000;
/** How often the channel's log is read while waiting for the answer, ms. */
const POLL_MS = 25;
/** Envelopes read from a channel's log at once: a consulting channel holds a handful. */
const LOG_PAGE = 100;

/**
 * A runner replica killed in the middle of a turn, measured from outside at the defaults of hub-service (the inbox
 * ack wait) and of the runner (the turn-lock TTL). A hub runs in a bench host; two agent runner processes host the
 * same agent, whose every turn calls a tool that takes `SLOW_TOOL_MS`. Per run, a person opens a consulting channel
 * with the agent and asks; once one replica's tool has started, that replica is killed (SIGKILL) and the times until
 * the survivor starts the turn again and until its answer is in the channel's log are taken. Once the channel has
 * closed, the answer must be in it exactly once, or the scenario fails. A fresh replica then takes the dead one's place.
 */
export async function runnerTakeover(ctx: ScenarioContext): Promise<RunnerTakeoverResult> {
  const s = ctx.sizes.runnerTakeover;
  const prefix = ctx.prefix('rt');
  const names = hubNames(prefix);
  await startHubIn(ctx, await ctx.host('hub'), { prefix, standby: false });
  const rpc = ctx.rpc(prefix);
  let started = 0;
  const startReplica = async (): Promise<RunnerProcess> => {
    const replica = RunnerProcess.start({
      name: `replica-${started++}`,
      natsUrl: ctx.natsUrl,
      prefix,
      configPath: CONFIG,
    });
    try {
      await replica.waitForOutput('hosting agent', 1, START_TIMEOUT_MS);
    } catch (err) {
      await replica.stop('SIGKILL');
      throw err;
    }
    return replica;
  };
  const replicas: RunnerProcess[] = [];
  try {
    for (let i = 0; i < 2; i += 1) replicas.push(await startReplica());
    const agentId = (await rpc.call('findAgentId', { name: AGENT })).agent_id;
    if (agentId === null) throw new Error(`${AGENT} is not registered`);
    const consumer = await ctx.jsm.consumers.info(names.inboxStream, names.inboxConsumer(agentId));
    const askerId = (await rpc.call('register', { passport: { name: 'asker', kind: 'human' } })).passport.agent_id;
    if (askerId === undefined || askerId === null) throw new Error('the asker got no agent id');
    const ackWaitNs = consumer.config.ack_wait;
    if (ackWaitNs === undefined) throw new Error(`the inbox consumer of ${AGENT} has no ack wait`);
    const runs: RunnerTakeoverRunResult[] = [];
    for (let r = 0; r < s.runs; r += 1) {
      ctx.log(`run ${r + 1} of ${s.runs}: ${replicas.map((x) => x.name).join(' and ')} host ${AGENT}`);
      const marks = replicas.map((x) => x.count(SLOW_TOOL_MARK));
      const { channel } = await rpc.call(
        'createChannel',
        { type: CONSULTING_TYPE, participants: [agentId] },
        { caller: askerId },
      );
      const channelId = channel.channel_id;
      await rpc.call(
        'post',
        { channel_id: channelId, sender_id: askerId, event_type: EV_TEXT, event_data: { text: QUESTION } },
        { caller: askerId },
      );
      const holder = await firstToStart(replicas, marks);
      const survivor = replicas.find((x) => x !== holder);
      if (survivor === undefined) throw new Error('no surviving replica');
      const survivorMarks = survivor.count(SLOW_TOOL_MARK);
      const killedAt = performance.now();
      await holder.stop('SIGKILL');
      await survivor.waitForOutput(SLOW_TOOL_MARK, survivorMarks + 1, ANSWER_TIMEOUT_MS);
      const startedAgainAt = performance.now();
      const reading = { channelId, readerId: askerId };
      const answersIn = (log: readonly Envelope[]): Envelope[] =>
        log.filter((e) => e.sender_id === agentId && e.event_type === EV_TEXT);
      await logUntil(rpc, reading, { done: (log) => answersIn(log).length > 0, what: 'an answer' });
      const answeredAt = performance.now();
      // Counted once the channel closed (after the answer, refusing any post after it): a second answer is seen too.
      const answers = answersIn(
        await logUntil(rpc, reading, {
          done: (log) => log.some((e) => e.event_type === EV_CHANNEL_CLOSED),
          what: 'close',
        }),
      );
      if (answers.length !== 1 || answers[0]?.event_data['text'] !== ANSWER) {
        throw new Error(`channel ${channelId}: ${answers.length} answers from ${AGENT}, where one was due`);
      }
      runs.push({
        turn_started_ms: round(startedAgainAt - killedAt, 1),
        answered_ms: round(answeredAt - killedAt, 1),
      });
      replicas.splice(replicas.indexOf(holder), 1, await startReplica());
    }
    return {
      inbox_ack_wait_ms: ackWaitNs / 1e6,
      turn_ms: SLOW_TOOL_MS,
      runs,
      turn_started_ms: spreadOf(runs, (x) => x.turn_started_ms),
      answered_ms: spreadOf(runs, (x) => x.answered_ms),
    };
  } finally {
    await Promise.all(replicas.map((x) => x.stop('SIGKILL')));
  }
}

/** The replica whose tool started first since `marks` (each replica's count of the mark before the question). */
async function firstToStart(replicas: readonly RunnerProcess[], marks: readonly number[]): Promise<RunnerProcess> {
  const until = performance.now() + TURN_START_TIMEOUT_MS;
  for (;;) {
    const holder = replicas.find((x, i) => x.count(SLOW_TOOL_MARK) > (marks[i] ?? 0));
    if (holder !== undefined) return holder;
    if (performance.now() > until) throw new Error(`no replica started the turn within ${TURN_START_TIMEOUT_MS} ms`);
    await sleep(5);
  }
}

/** The channel's log, read every `POLL_MS` until `done` says it holds what the bench waits for (`what`). */
async function logUntil(
  rpc: HubRpc,
  who: { readonly channelId: string; readonly readerId: string },
  wait: { readonly done: (log: readonly Envelope[]) => boolean; readonly what: string },
): Promise<Envelope[]> {
  const { done, what } = wait;
  const giveUpAt = performance.now() + ANSWER_TIMEOUT_MS;
  for (;;) {
    const page = await rpc.call(
      'readWal',
      { channel_id: who.channelId, since: 1, limit: LOG_PAGE },
      { caller: who.readerId },
    );
    if (page.next_since !== null) throw new Error(`channel ${who.channelId} holds more than ${LOG_PAGE} envelopes`);
    if (done(page.envelopes)) return page.envelopes;
    if (performance.now() > giveUpAt) {
      throw new Error(`channel ${who.channelId}: no ${what} within ${ANSWER_TIMEOUT_MS} ms of the kill`);
    }
    await sleep(POLL_MS);
  }
}
