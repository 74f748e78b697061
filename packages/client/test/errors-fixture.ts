import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HubUnavailableError } from '@ag2net/client';
import { errors } from '@nats-io/transport-node';
import { z } from 'zod';

// conformance/fixtures/errors.json: which errors a client sends again, for an idempotent operation or not, and which
// end an agent's turn at once. The Python client checks the same file (clients/python/tests/test_conformance.py).
const FIXTURE = fileURLToPath(new URL('../../../conformance/fixtures/errors.json', import.meta.url));

const ResendSchema = z.object({ idempotent: z.boolean(), not_idempotent: z.boolean() });
const RetryFixtureSchema = z.object({
  may_have_applied_reason: z.string(),
  retry: z.array(z.object({ name: z.string(), wire: z.unknown(), resend: ResendSchema, retry_turn: z.boolean() })),
  retry_local: z.array(z.object({ name: z.string(), resend: ResendSchema.optional(), retry_turn: z.boolean() })),
});

/** `retry`, `retry_local` and `may_have_applied_reason` of errors.json. */
export const retryFixture = RetryFixtureSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

/**
 * The local failures of `retry_local`, by name, as the TypeScript client meets them: what nats.js rejects a request
 * with when no hub subscribes or none answers in time, what `HubRpc` throws once its retry time ran out, and a
 * handler's own exception.
 */
export const LOCAL_FAILURES: Readonly<Record<string, () => Error>> = {
  no_responders: () =>
    new errors.RequestError('no responders', { cause: new errors.NoRespondersError('t.hub.v1.pendingTurnsFor') }),
  timeout: () => new errors.TimeoutError(),
  hub_unavailable: () => new HubUnavailableError('no hub answered post within 30000 ms'),
  handler_exception: () => new Error('model down'),
};

/** The failure of a `retry_local` case; throws for a name the fixture has and this client does not. */
export function localFailure(name: string): Error {
  const make = LOCAL_FAILURES[name];
  if (make === undefined) throw new Error(`errors.json names a local failure this test does not know: ${name}`);
  return make();
}
