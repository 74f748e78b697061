import { HubRpc } from '@ag2net/client';
import { EV_CHANNEL_CLOSED, EV_TEXT, type Envelope } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { readWholeWal } from './support/chaos-load.js';
import { fileStack } from './support/file-stack.js';
import { startHubService, startRunner, type ServiceProcess } from './support/processes.js';

/**
 * Two replicas of one agent run side by side with the runner's own turn-lock settings and the hub's default inbox ack
 * wait (6 s). The replica that took a turn
 * is killed (SIGKILL) in the middle of it; the other must take the turn over and answer it exactly once — within
 * the bound of the wait below, far below the 120 s that a dead replica's lock used to hold the turn.
 */

const CONFIG = 'test/fixtures/e2e/slow-agent.yaml';
const ANSWER = 'Logs are append-only.';
/** The bound on the takeover: well below the old 120 s turn-lock TTL, well above a heartbeat lock's lapse. */
const TAKEOVER_BOUND_MS = 45_000;

const stack = fileStack();

const channelLog = async (prefix: string, channelId: string): Promise<Envelope[]> =>
  (await readWholeWal(stack.nc, prefix)).filter((e) => e.channel_id === channelId);

describe('runner takeover', () => {
  it('a replica killed mid-turn: the other replica answers exactly once, well before the old 120 s lock TTL', async () => {
    const prefix = uniqueName('takeover');
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
    // At hub-service's defaults: a dead replica's deliveries come back after the inbox ack wait.
    stack.track(startHubService({ natsUrl: stack.url, prefix, hubId: 'hub' }));
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).role === 'active', {
      timeoutMs: 30_000,
      what: 'the hub',
    });
    const replicas: ServiceProcess[] = ['replica-a', 'replica-b'].map((name) =>
      stack.track(startRunner({ natsUrl: stack.url, prefix, configPath: CONFIG, name, turnLockTtlMs: null })),
    );
    const slowpoke = await waitFor(
      async () => (await rpc.call('findAgentId', { name: 'slowpoke' })).agent_id ?? false,
      {
        timeoutMs: 30_000,
        what: 'slowpoke to register',
      },
    );
    // Both replicas host slowpoke (each consumes its inbox) before the question is asked.
    for (const r of replicas) {
      await waitFor(() => /slowpoke/.test(r.output()), { timeoutMs: 30_000, what: `${r.name} to host slowpoke` });
    }

    const asker = (await rpc.call('register', { passport: { name: 'asker', kind: 'human' } })).passport.agent_id ?? '';
    const { channel } = await rpc.call(
      'createChannel',
      { type: 'consulting', participants: [slowpoke] },
      { caller: asker, timeout: 60_000 },
    );
    const channelId = channel.channel_id;
    await rpc.call(
      'post',
      { channel_id: channelId, sender_id: asker, event_type: EV_TEXT, event_data: { text: 'What are logs?' } },
      { caller: asker },
    );

    const holder = await waitFor(() => replicas.find((r) => r.output().includes('SLOW-TOOL-STARTED')), {
      timeoutMs: 30_000,
      what: 'a replica to start the turn',
    });
    await holder.stop('SIGKILL');
    const survivor = replicas.find((r) => r !== holder);
    if (survivor === undefined) throw new Error('no surviving replica');

    const log = await waitFor(
      async () => {
        const entries = await channelLog(prefix, channelId);
        return entries.some((e) => e.event_type === EV_CHANNEL_CLOSED) ? entries : undefined;
      },
      {
        timeoutMs: TAKEOVER_BOUND_MS,
        intervalMs: 250,
        what: 'the surviving replica to answer and the channel to close',
      },
    );
    expect(survivor.output()).toContain('SLOW-TOOL-STARTED');
    expect(survivor.child.exitCode).toBeNull();
    const answers = log.filter((e) => e.sender_id === slowpoke && e.event_type === EV_TEXT);
    expect(answers.map((e) => e.event_data['text'])).toEqual([ANSWER]);
    const closed = log.filter((e) => e.event_type === EV_CHANNEL_CLOSED);
    expect(closed.map((e) => e.event_data['reason'])).toEqual(['consulting_complete']);
  }, 90_000);
});
