import { ErrorReason, HUB_OPS, errorFromWire, mayResend } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { HubRpc } from '../src/rpc.js';
import { LOCAL_FAILURES, localFailure, retryFixture } from './errors-fixture.js';

/** An idempotent operation and one that is not, as `resend.idempotent` and `resend.not_idempotent` of errors.json. */
const OPS = {
  idempotent: {
    op: 'pendingTurnsFor',
    result: { turns: [] },
    call: (rpc: HubRpc): Promise<unknown> => rpc.call('pendingTurnsFor', {}, { caller: 'alice' }),
  },
  not_idempotent: {
    op: 'reportTurnFailure',
    result: {},
    call: (rpc: HubRpc): Promise<unknown> =>
      rpc.call(
        'reportTurnFailure',
        { channel_id: 'c1', envelope_id: 'e1', exc_type: 'Error', exc_message: 'model down' },
        { caller: 'alice' },
      ),
  },
} as const;

/**
 * A connection that answers the first request with `first` (an error reply, or a failure to reject with) and every
 * later one with `result`, counting the requests.
 */
function onceThenOk(
  first: { readonly reply: unknown } | Error,
  result: unknown,
): { nc: NatsConnection; sent(): number } {
  let sent = 0;
  const fake = {
    request(): Promise<{ string(): string }> {
      sent += 1;
      if (sent === 1 && first instanceof Error) return Promise.reject(first);
      const reply = sent === 1 && !(first instanceof Error) ? first.reply : { ok: true, result };
      return Promise.resolve({ string: () => JSON.stringify(reply) });
    },
  };
  // Only `request` is used by HubRpc.call; the rest of the connection is never touched here.
  return { nc: fake as unknown as NatsConnection, sent: () => sent };
}

/** Whether the real resend loop of `HubRpc` sent `kind`'s operation again after `first`, or threw `first`'s error. */
async function resent(first: { readonly reply: unknown } | Error, kind: keyof typeof OPS): Promise<boolean> {
  const { result, call } = OPS[kind];
  const { nc, sent } = onceThenOk(first, result);
  // One partition, given: the fake answers every request alike, so it must not be asked the partition count first.
  const outcome = await call(new HubRpc(nc, { prefix: 't', retryForMs: 5_000, partitions: 1 })).then(
    (answer) => ({ answer }),
    (err: unknown) => ({ err }),
  );
  if ('answer' in outcome) {
    expect([outcome.answer, sent()]).toEqual([result, 2]);
    return true;
  }
  expect(sent()).toBe(1);
  return false;
}

describe('errors.json: what the TypeScript client sends again', () => {
  it('uses an idempotent operation and one that is not', () => {
    expect([HUB_OPS[OPS.idempotent.op].idempotent, HUB_OPS[OPS.not_idempotent.op].idempotent]).toEqual([true, false]);
    expect(ErrorReason.MayHaveApplied).toBe(retryFixture.may_have_applied_reason);
  });

  it.each(retryFixture.retry.map((c) => [c.name, c] as const))(
    'resends after the wire error "%s" as errors.json says',
    async (_name, c) => {
      const reply = { reply: { ok: false, error: c.wire } };
      const outcome = {
        idempotent: await resent(reply, 'idempotent'),
        not_idempotent: await resent(reply, 'not_idempotent'),
      };
      expect(outcome).toEqual(c.resend);
      const err = errorFromWire(c.wire);
      expect({
        idempotent: mayResend(err, { idempotent: true }),
        not_idempotent: mayResend(err, { idempotent: false }),
      }).toEqual(c.resend);
    },
  );

  it.each(retryFixture.retry_local.filter((c) => c.resend !== undefined).map((c) => [c.name, c] as const))(
    'resends after the local failure "%s" as errors.json says',
    async (name, c) => {
      const outcome = {
        idempotent: await resent(localFailure(name), 'idempotent'),
        not_idempotent: await resent(localFailure(name), 'not_idempotent'),
      };
      expect(outcome).toEqual(c.resend);
    },
  );

  it('knows every local failure errors.json names', () => {
    expect(retryFixture.retry_local.map((c) => c.name).sort()).toEqual(Object.keys(LOCAL_FAILURES).sort());
  });
});
