/**
 * History retention on a secured stack: the hub, connected as the hub-service user with exactly the permissions
 * `hubServicePermissions` grants, purges an expired channel's WAL subject.
 */
import { HubClient, HubRpc, ackInvite, isInviteFor } from '@ag2net/client';
import { createManualClock } from '@ag2net/hub';
import { NetworkError, OPERATOR_CALLER } from '@ag2net/protocol';
import { connectWithCreds, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecuredStack, type SecuredStack } from '../../../test/support/secured-stack.js';

const HOUR = 3_600_000;
const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
let stack: SecuredStack;
const open: HubClient[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({
    openRegistration: true,
    hub: { clock, sweepIntervalMs: 0, retainClosedMs: HOUR },
  });
}, 60_000);

afterAll(async () => {
  for (const hub of open.reverse()) await hub.close({ graceMs: 0 });
  await stack?.stop();
});

async function registrant(): Promise<HubClient> {
  const hub = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.paths.registrantCreds });
  open.push(hub);
  return hub;
}

describe('history retention on a secured hub', () => {
  it('the hub-service user purges an expired channel’s WAL subject', async () => {
    const bobRegistrant = await registrant();
    await bobRegistrant.register(
      { name: 'bob' },
      {
        handler: async (e, self) => {
          if (isInviteFor(self, e)) await ackInvite(self, e);
        },
      },
    );
    const alice = await (await registrant()).registerHuman({ name: 'alice' });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('hello');
    await alice.hub.call('closeChannel', { channel_id: channel.channelId }, { caller: alice.agentId });

    const admin = await connectWithCreds({ url: stack.url, creds: stack.adminCreds });
    try {
      const jsm = await jetstreamManager(admin);
      const subject = stack.names.wal(channel.channelId);
      const count = async (): Promise<number> =>
        (await jsm.streams.info(stack.names.walStream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
      expect(await count()).toBe(5);
      clock.advance(HOUR);
      // Until delivery has fanned out the close notice, a sweep leaves the channel for a later one.
      await waitFor(
        async () => {
          await stack.hub.tick();
          return (await count()) === 0;
        },
        { what: 'the WAL subject purged', timeoutMs: 10_000 },
      );
      const operator = new HubRpc(admin, { prefix: stack.prefix, retryForMs: 5_000 });
      const refused = await operator
        .call('readWal', { channel_id: channel.channelId }, { caller: OPERATOR_CALLER })
        .then(
          () => null,
          (err: unknown) => (err instanceof NetworkError ? [err.code, err.details?.['reason']] : err),
        );
      expect(refused).toEqual(['not_found', 'expired']);
    } finally {
      await admin.close();
    }
  });
});
