import { Access, HUB_OPS, HUB_OP_NAMES, NetworkError, OPERATOR_CALLER, type HubOp } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { authorize, callerOf, mayRead, type AccessDirectory } from './access.js';

const CHANNEL = '01JCHANNEL0000000000000000';
/** alice and bob are registered and in CHANNEL; carol is registered and outside it; mallory is not registered. */
const directory: AccessDirectory = {
  isRegistered: (id) => ['alice', 'bob', 'carol'].includes(id),
  channel: (id) =>
    id === CHANNEL
      ? {
          participants: [{ agent_id: 'alice' }, { agent_id: 'bob' }],
        }
      : undefined,
};

/** The wire code and message of a refusal, or `'allowed'` with the caller handed on. */
function outcome(op: HubOp, caller: string, request: unknown = { channel_id: CHANNEL }): string {
  try {
    return `allowed as ${JSON.stringify(authorize({ op, caller, request }, directory))}`;
  } catch (err) {
    if (err instanceof NetworkError) return `${err.code}: ${err.message}`;
    throw err;
  }
}

const ofClass = (access: Access) => HUB_OP_NAMES.filter((op) => HUB_OPS[op].access === access);

describe('authorize', () => {
  it('lets anyone call a public op, with no caller', () => {
    expect(ofClass(Access.Public).length).toBeGreaterThan(0);
    for (const op of ofClass(Access.Public)) expect(outcome(op, '')).toBe('allowed as ""');
  });

  it('lets a registered identity call a self op as itself, and refuses an unregistered one', () => {
    for (const op of ofClass(Access.Self)) {
      expect(outcome(op, 'carol')).toBe('allowed as "carol"');
      expect(outcome(op, 'mallory')).toBe("access_denied: unknown caller 'mallory'");
    }
  });

  it('lets a participant call a participant op on its channel; refuses everyone else; unknown channel is not_found', () => {
    for (const op of ofClass(Access.Participant)) {
      expect(outcome(op, 'bob')).toBe('allowed as "bob"');
      expect(outcome(op, 'mallory')).toBe("access_denied: unknown caller 'mallory'");
      expect(outcome(op, 'bob', { channel_id: 'nope' })).toBe('not_found: channel not found: nope');
    }
  });

  it('answers a non-member’s read of a channel exactly as an unknown channel, and refuses its acts on it', () => {
    const outsider = ofClass(Access.Participant).map((op) => [op, outcome(op, 'carol')]);
    const hidden = `not_found: channel not found: ${CHANNEL}`;
    const refused = `access_denied: 'carol' is not a participant of channel '${CHANNEL}'`;
    expect(Object.fromEntries(outsider)).toEqual({
      getChannel: hidden,
      readWal: hidden,
      findEnvelopeByCausation: hidden,
      canSend: hidden,
      adapterState: hidden,
      closeChannel: refused,
      post: refused,
      reportTurnFailure: refused,
      acquireTurnLock: refused,
      renewTurnLock: refused,
      releaseTurnLock: refused,
    });
    // But for the id the caller sent, the very answer a channel that does not exist gets.
    const unknown = outcome('readWal', 'carol', { channel_id: 'nope' });
    expect(outcome('readWal', 'carol').replace(CHANNEL, '<id>')).toBe(unknown.replace('nope', '<id>'));
  });

  it('lets only the operator call an operator op', () => {
    expect(ofClass(Access.Operator)).toEqual(['revokeIdentity', 'readmitIdentity', 'deliveryLag', 'readAudit']);
    expect(outcome('readAudit', OPERATOR_CALLER)).toBe(`allowed as "${OPERATOR_CALLER}"`);
    for (const caller of ['alice', 'mallory'])
      expect(outcome('readAudit', caller)).toBe('access_denied: operator only');
  });

  it('lets the operator call exactly the ops whose operatorReads is true, on any channel that exists', () => {
    const reads = HUB_OP_NAMES.filter((op) => HUB_OPS[op].operatorReads);
    expect(reads.sort()).toEqual(
      [
        'adapterState',
        'deliveryLag',
        'findEnvelopeByCausation',
        'getChannel',
        'getTask',
        'listChannels',
        'listTasks',
        'readAudit',
        'readWal',
        'readmitIdentity',
        'revokeIdentity',
      ].sort(),
    );
    for (const op of HUB_OP_NAMES) {
      if (HUB_OPS[op].access === Access.Public) continue;
      const expected = HUB_OPS[op].operatorReads
        ? `allowed as "${OPERATOR_CALLER}"`
        : `access_denied: ${op} is not an operator operation`;
      expect(outcome(op, OPERATOR_CALLER)).toBe(expected);
    }
    expect(outcome('readWal', OPERATOR_CALLER, { channel_id: 'nope' })).toBe('not_found: channel not found: nope');
  });
});

describe('callerOf', () => {
  it('takes the last subject token as an identity id or the operator caller, and nothing else', () => {
    expect(callerOf('p.hub.v1.post.alice')).toBe('alice');
    expect(callerOf(`p.hub.v1.readAudit.${OPERATOR_CALLER}`)).toBe(OPERATOR_CALLER);
    expect(() => callerOf('p.hub.v1.post.$admin')).toThrow("caller in subject is invalid: '$admin'");
  });
});

describe('mayRead', () => {
  it('shows the operator every envelope and anyone else only those addressed to it', () => {
    const secret = { sender_id: 'alice', audience: ['bob'] };
    expect([OPERATOR_CALLER, 'alice', 'bob', 'carol'].map((c) => mayRead(c, secret))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});
