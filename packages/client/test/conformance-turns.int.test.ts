import { HubClient, ackInvite, isInviteFor } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { EV_TEXT, errorFromWire, isFinalError } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localFailure, retryFixture } from './errors-fixture.js';

// errors.json through the real turn path of AgentClient: a handler that throws an error of the fixture on the first
// run of a delivery is run again, or its failure is reported at once with attempts = 1 and the delivery acked.
const nats = natsPerFile();
let hub: { close(): Promise<void> } | null = null;
let client: HubClient | null = null;

beforeAll(async () => {
  const prefix = uniqueName('conf');
  hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
  client = await HubClient.connect({ servers: nats.url, prefix });
});

afterAll(async () => {
  await client?.close();
  await hub?.close();
});

/** How the turn of one delivery went: the runs of its handler, and the attempts each failure report gave. */
interface TurnOutcome {
  calls: number;
  reported: number[];
}

/**
 * Sends one text per case to an agent whose handler throws the case's error on the first run of each delivery and
 * returns on the next; resolves, once every delivery was acked, with each case's outcome by name.
 */
async function runTurns(
  cases: readonly { readonly name: string; readonly error: () => unknown }[],
): Promise<Map<string, TurnOutcome>> {
  if (client === null) throw new Error('no hub client');
  const hubClient = client;
  const outcomes = new Map<string, TurnOutcome>(cases.map((c) => [c.name, { calls: 0, reported: [] }]));
  const errors = new Map(cases.map((c) => [c.name, c.error]));
  const person = await hubClient.registerHuman({ name: uniqueName('person') });
  const agent = await hubClient.register(
    { name: uniqueName('agent') },
    {
      turnRetryBackoffMs: 10,
      onTurnFailed: ({ envelope: e, attempts }) => {
        outcomes.get(String(e.event_data['text']))?.reported.push(attempts);
      },
      handler: async (e, self) => {
        if (isInviteFor(self, e)) {
          await ackInvite(self, e);
          return;
        }
        if (e.event_type !== EV_TEXT || e.sender_id === self.agentId) return;
        const text = String(e.event_data['text']);
        const outcome = outcomes.get(text);
        const error = errors.get(text);
        if (outcome === undefined || error === undefined) throw new Error(`no case named ${text}`);
        outcome.calls += 1;
        if (outcome.calls === 1) throw error();
      },
    },
  );
  const channel = await person.open({ type: 'conversation', target: agent.passport.name });
  for (const c of cases) await channel.send(c.name);
  const settled = (o: TurnOutcome): boolean => o.calls >= 2 || o.reported.length > 0;
  await waitFor(() => [...outcomes.values()].every(settled), { timeoutMs: 20_000, what: 'every turn to settle' });
  const names = hubClient.rpc.names;
  const jsm = await jetstreamManager(hubClient.nc);
  await waitFor(
    async () => {
      const info = await jsm.consumers.info(names.inboxStream, names.inboxConsumer(agent.agentId));
      return info.num_ack_pending + info.num_pending === 0;
    },
    { what: 'every delivery acked' },
  );
  await agent.disconnect();
  await person.disconnect();
  return outcomes;
}

/** What errors.json says of a turn: run again once (then it succeeds), or reported at once with attempts = 1. */
function expected(retryTurn: boolean): TurnOutcome {
  return retryTurn ? { calls: 2, reported: [] } : { calls: 1, reported: [1] };
}

describe('errors.json: which failures end a turn of a TypeScript agent', () => {
  it('runs again a turn whose handler threw a retry wire error, and reports a final one at once', async () => {
    const outcomes = await runTurns(
      retryFixture.retry.map((c) => ({ name: c.name, error: () => errorFromWire(c.wire) })),
    );
    expect(Object.fromEntries(outcomes)).toEqual(
      Object.fromEntries(retryFixture.retry.map((c) => [c.name, expected(c.retry_turn)])),
    );
    expect(retryFixture.retry.map((c) => [c.name, isFinalError(errorFromWire(c.wire))])).toEqual(
      retryFixture.retry.map((c) => [c.name, !c.retry_turn]),
    );
  });

  it('runs again a turn whose handler threw a local failure of retry_local', async () => {
    const outcomes = await runTurns(
      retryFixture.retry_local.map((c) => ({ name: c.name, error: () => localFailure(c.name) })),
    );
    expect(Object.fromEntries(outcomes)).toEqual(
      Object.fromEntries(retryFixture.retry_local.map((c) => [c.name, expected(c.retry_turn)])),
    );
  });
});
