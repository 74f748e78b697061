import { AccessDeniedError, hubNames } from '@ag2net/protocol';
import { errors, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { HubRpc, HubUnavailableError } from './rpc.js';

/** A connection that records the subjects requested and answers every request with an empty pending-turns list. */
function recordingConnection(): { nc: NatsConnection; subjects: string[] } {
  const subjects: string[] = [];
  const fake = {
    request(subject: string): Promise<{ string(): string }> {
      subjects.push(subject);
      return Promise.resolve({ string: () => JSON.stringify({ ok: true, result: { turns: [] } }) });
    },
  };
  // Only `request` is used by HubRpc.call; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, subjects };
}

describe('HubRpc.call options', () => {
  it('sends to the caller-scoped subject named by options.caller', async () => {
    const { nc, subjects } = recordingConnection();
    const rpc = new HubRpc(nc, { prefix: 'k2', partitions: 1 });
    const reply = await rpc.call('pendingTurnsFor', {}, { caller: 'agent-7', timeout: 1000 });
    expect(reply).toEqual({ turns: [] });
    expect(subjects).toEqual([hubNames('k2').rpc('pendingTurnsFor', 'agent-7')]);
  });

  it('refuses an operation that needs a caller when options carry none', async () => {
    const { nc, subjects } = recordingConnection();
    const rpc = new HubRpc(nc, { prefix: 'k2' });
    await expect(rpc.call('pendingTurnsFor', {}, { timeout: 1000 })).rejects.toThrow(
      new TypeError("pendingTurnsFor needs the caller's agent id"),
    );
    expect(subjects).toEqual([]);
  });
});

/** A connection whose every request fails with `failure`, counting the attempts. */
function failingConnection(failure: () => Error): { nc: NatsConnection; attempts: () => number } {
  let attempts = 0;
  const fake = {
    request(): Promise<never> {
      attempts += 1;
      return Promise.reject(failure());
    },
  };
  // Only `request` is used by HubRpc.call; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, attempts: () => attempts };
}

/** What nats.js rejects a request with when the server refuses it with a permissions violation. */
function refused(operation: 'publish' | 'subscription', subject: string): Error {
  const verb = operation === 'publish' ? 'Publish' : 'Subscription';
  const message = `Permissions Violation for ${verb} to "${subject}"`;
  return new errors.RequestError(message, {
    cause: new errors.PermissionViolationError(message, operation, subject),
  });
}

describe('HubRpc.call refused by NATS', () => {
  it('throws AccessDeniedError naming the operation and the subject, at once, for an idempotent op too', async () => {
    const subject = hubNames('k2').rpc('findAgentId');
    const { nc, attempts } = failingConnection(() => refused('publish', subject));
    const rpc = new HubRpc(nc, { prefix: 'k2', retryForMs: 5_000 });
    const err: unknown = await rpc.call('findAgentId', { name: 'scholar' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(err).toMatchObject({
      code: 'access_denied',
      message: 'this connection may not call findAgentId (NATS refused k2.hub.v1.findAgentId)',
    });
    expect(err).toHaveProperty('cause', expect.any(errors.RequestError));
    expect(attempts()).toBe(1);
  });

  it('names the reply inbox when NATS refused its subscription', async () => {
    const { nc } = failingConnection(() => refused('subscription', '_INBOX.abc.*'));
    await expect(new HubRpc(nc).call('health', {})).rejects.toThrow(
      new AccessDeniedError(
        'this connection may not call health (NATS refused the subscription to its reply inbox _INBOX.abc.*)',
      ),
    );
  });

  it('leaves other NATS failures as they were: no responders is still retried, then unavailable', async () => {
    const { nc, attempts } = failingConnection(
      () => new errors.RequestError('no responders', { cause: new errors.NoRespondersError('k2.hub.v1.health') }),
    );
    await expect(new HubRpc(nc, { retryForMs: 120 }).call('health', {})).rejects.toThrow(HubUnavailableError);
    expect(attempts()).toBeGreaterThan(1);
  });
});
