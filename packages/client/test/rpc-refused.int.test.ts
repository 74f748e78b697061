/**
 * A request NATS refuses on a secured hub (a permissions violation) reaches the caller as `AccessDeniedError` naming
 * the operation and the subject, at once, never as a raw NATS error nor after the retries of an idempotent op.
 */
import { HubClient } from '@ag2net/client';
import { AccessDeniedError } from '@ag2net/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecuredStack, type SecuredStack } from '../../../test/support/secured-stack.js';

let stack: SecuredStack;
const open: HubClient[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({ openRegistration: true });
}, 60_000);

afterAll(async () => {
  for (const hub of open.reverse()) await hub.close({ graceMs: 0 });
  await stack.stop();
});

async function registrant(): Promise<HubClient> {
  const hub = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.paths.registrantCreds });
  open.push(hub);
  return hub;
}

/** The error `call` fails with, and how long it took to fail, in ms. */
async function refusal(call: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  const err = await call.then(
    () => new Error('expected NATS to refuse the call'),
    (e: unknown) => e,
  );
  return { err, ms: Date.now() - started };
}

describe('a request NATS refuses', () => {
  it('is an AccessDeniedError naming the operation and the subject for the registrant’s findAgentId', async () => {
    const hub = await registrant();
    const { err, ms } = await refusal(hub.call('findAgentId', { name: 'scholar' }));
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(err).toMatchObject({
      code: 'access_denied',
      message: `this connection may not call findAgentId (NATS refused ${stack.names.rpc('findAgentId')})`,
    });
    // Refused by the server at once: not the 10 s of a timed-out attempt, nor the 30 s of an op's retries.
    expect(ms).toBeLessThan(5_000);
    // The registrant may still call what it may call, on the same connection.
    expect((await hub.call('health', {})).role).toBe('active');
  });

  it('is an AccessDeniedError for an identity calling as another identity', async () => {
    const hub = await registrant();
    const agent = await hub.registerHuman({ name: 'erin' });
    const other = await hub.registerHuman({ name: 'frank' });
    const subject = stack.names.rpc('pendingTurnsFor', other.agentId);
    const { err } = await refusal(agent.hub.call('pendingTurnsFor', {}, { caller: other.agentId }));
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(err).toMatchObject({ message: `this connection may not call pendingTurnsFor (NATS refused ${subject})` });
    expect(await agent.hub.call('pendingTurnsFor', {}, { caller: agent.agentId })).toEqual({ turns: [] });
  });
});
