import { OPERATOR_CALLER } from '@ag2net/protocol';
import { toNetworkError } from '@ag2net/protocol/internal';
import { describe, expect, it } from 'vitest';
import { CallerGate, type CallerCredentials, type CallerDirectory, type GateCall } from './caller-gate.js';
import type { CallerOrigin } from './caller-origin.js';

const imported = (fields: Partial<Extract<CallerOrigin, { kind: 'imported' }>> = {}): CallerOrigin => ({
  kind: 'imported',
  account: 'AID',
  user: 'UALICE',
  name: 'alice',
  host: '10.0.0.7',
  connection: 'NSRV/1',
  jwtIssuedAt: 1_000,
  ...fields,
});

const directory = (states: Record<string, CallerCredentials>): CallerDirectory => ({
  credentialsOf: (id) => states[id],
});
const fresh: CallerCredentials = { revoked: false, notBefore: 1_000, previousIssuedAt: 900 };

/** `ok`, or the wire code, message and details of the refusal. */
function outcome(gate: CallerGate, call: GateCall, dir: CallerDirectory = directory({})): unknown {
  try {
    gate.check(call, dir);
    return 'ok';
  } catch (err) {
    return toNetworkError(err).toWire();
  }
}

describe('CallerGate', () => {
  it('lets an identity call as itself only: the caller token must be the name of its JWT', () => {
    const gate = new CallerGate();
    expect(outcome(gate, { op: 'setSkill', caller: 'alice', origin: imported() })).toBe('ok');
    expect(outcome(gate, { op: 'setSkill', caller: 'bob', origin: imported() })).toEqual({
      code: 'access_denied',
      message: "caller 'bob' is not the identity of this connection",
    });
    // The operator caller is a user named `$operator`; nobody else calls as it.
    expect(
      outcome(gate, { op: 'readAudit', caller: OPERATOR_CALLER, origin: imported({ name: OPERATOR_CALLER }) }),
    ).toBe('ok');
    expect(outcome(gate, { op: 'readAudit', caller: OPERATOR_CALLER, origin: imported() })).toMatchObject({
      code: 'access_denied',
    });
    // Public operations carry no caller; anyone of the account may call them.
    expect(outcome(gate, { op: 'health', caller: '', origin: imported({ name: 'registrant' }) })).toBe('ok');
  });

  it('trusts the hub’s own account, and binds no name on a hub that issues no credentials', () => {
    expect(outcome(new CallerGate(), { op: 'setSkill', caller: 'bob', origin: { kind: 'local' } })).toBe('ok');
    expect(outcome(new CallerGate({ bindNames: false }), { op: 'setSkill', caller: 'bob', origin: imported() })).toBe(
      'ok',
    );
  });

  it('refuses a revoked identity from anywhere exactly as an unknown caller', () => {
    const dir = directory({ alice: { ...fresh, revoked: true } });
    const refusal = {
      code: 'access_denied',
      message: "unknown caller 'alice'",
      details: { reason: 'unknown_caller' },
    };
    expect(outcome(new CallerGate(), { op: 'setSkill', caller: 'alice', origin: imported() }, dir)).toEqual(refusal);
    expect(outcome(new CallerGate(), { op: 'setSkill', caller: 'alice', origin: { kind: 'local' } }, dir)).toEqual(
      refusal,
    );
  });

  it('honours the newest JWT, the one it replaced, and a newer one; refuses an older, retired one', () => {
    const gate = new CallerGate();
    const dir = directory({ alice: fresh });
    const call = (iat: number | null): unknown =>
      outcome(gate, { op: 'setSkill', caller: 'alice', origin: imported({ jwtIssuedAt: iat }) }, dir);
    expect([call(1_000), call(900), call(1_200), call(null)]).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(call(899)).toEqual({
      code: 'auth_failed',
      message: 'these credentials were replaced by newer ones: connect with the newest credentials',
      details: { reason: 'credentials_retired' },
    });
    expect(call(950)).toMatchObject({ code: 'auth_failed' });
  });

  it('budgets register and attach per connection and per address, answering unavailable with the wait', () => {
    const now = { ms: 0 };
    const gate = new CallerGate({
      registration: { perConnection: { per_minute: 60, burst: 2 }, perSource: { per_minute: 60, burst: 3 } },
      now: () => now.ms,
    });
    const register = (connection: string, host = '10.0.0.7'): unknown =>
      outcome(gate, { op: 'register', caller: '', origin: imported({ connection, host }) });
    expect([register('c1'), register('c1')]).toEqual(['ok', 'ok']);
    expect(register('c1')).toEqual({
      code: 'unavailable',
      message: 'too many registrations from this connection or address: retry in 1000 ms',
      details: { retry_after_ms: 1000 },
    });
    // Another connection from the same address has its own budget, but the address's is nearly spent.
    expect(register('c2')).toBe('ok');
    expect(register('c3')).toMatchObject({ code: 'unavailable' });
    // Another address is untouched; a second later one more fits.
    expect(register('c4', '10.0.0.8')).toBe('ok');
    now.ms = 1_000;
    expect(register('c2')).toBe('ok');
    // Reads are never budgeted, and the hub's own account is not either.
    expect(outcome(gate, { op: 'health', caller: '', origin: imported() })).toBe('ok');
    expect(outcome(gate, { op: 'register', caller: '', origin: { kind: 'local' } })).toBe('ok');
  });
});
