import { HUB_OPS, PARTITIONED_OPS, SCATTERED_OPS, hubNames } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import {
  hubServiceInboxPrefix,
  hubServicePermissions,
  identityInboxPrefix,
  identityPermissions,
  operatorCallerPermissions,
  operatorPermissions,
  registrantPermissions,
} from './permissions.js';

const names = hubNames('acme');
/** The same hub with its channels over 4 partitions: the routed subjects `acme.hub.v1.<op>.<partition>.<caller>`. */
const partitioned = hubNames('acme', 4);

/** Whether NATS lets `subject` through `pattern` (`*` one token, `>` one or more at the end). */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** The subjects of `subjects` that some pattern of `allow` lets through. */
const allowedOf = (allow: readonly string[], subjects: readonly string[]): string[] =>
  subjects.filter((subject) => allow.some((pattern) => matches(pattern, subject)));

describe('identityPermissions', () => {
  it('allows exactly its own requests, the public operations, its own consumer and its own reply inbox', () => {
    expect(identityPermissions(names, 'alice-1')).toEqual({
      pub: {
        allow: [
          'acme.hub.v1.*.alice-1',
          'acme.hub.v1.*.*.alice-1',
          'acme.hub.v1.register',
          'acme.hub.v1.getAgent',
          'acme.hub.v1.getResume',
          'acme.hub.v1.getSkill',
          'acme.hub.v1.getRule',
          'acme.hub.v1.findAgentId',
          'acme.hub.v1.listAgents',
          'acme.hub.v1.health',
          '$JS.API.CONSUMER.MSG.NEXT.ACME_INBOX.agent_alice-1',
          '$JS.API.CONSUMER.INFO.ACME_INBOX.agent_alice-1',
          '$JS.ACK.ACME_INBOX.agent_alice-1.>',
        ],
        deny: [],
      },
      sub: { allow: ['_INBOX_alice-1.>'], deny: [] },
    });
  });

  it("publishes its own routed requests, never another caller's nor a caller-less operation on a routed subject", () => {
    const { allow } = identityPermissions(names, 'alice-1').pub;
    const subjects = [
      partitioned.rpcIn('post', 3, 'alice-1'),
      partitioned.rpcIn('listChannels', 0, 'alice-1'),
      partitioned.rpcIn('post', 3, 'bob-2'),
      partitioned.rpcIn('post', 3, '$operator'),
      partitioned.rpcIn('post', 3, '*'),
      'acme.hub.v1.post.3',
      'acme.hub.v1.adapterState.3',
      'acme.hub.v1.post.alice-1.bob-2',
      'acme.hub.v1.post.3.alice-1.x',
      'other.hub.v1.post.3.alice-1',
    ];
    expect(allowedOf(allow, subjects)).toEqual(['acme.hub.v1.post.3.alice-1', 'acme.hub.v1.listChannels.0.alice-1']);
  });

  it('every routed operation names its caller, which routed subjects carry last', () => {
    const routed = [...PARTITIONED_OPS, ...SCATTERED_OPS];
    expect(routed.filter((op) => !HUB_OPS[op].caller)).toEqual([]);
    expect(routed.map((op) => partitioned.rpcIn(op, 2, 'alice-1').split('.').at(-1))).toEqual(
      routed.map(() => 'alice-1'),
    );
  });

  it('grants nothing on the turn-lock bucket: turn locks go through the hub', () => {
    const { pub, sub } = identityPermissions(names, 'alice-1');
    expect([...pub.allow, ...sub.allow].filter((s) => s.includes('turn_locks') || s.startsWith('$KV'))).toEqual([]);
  });

  it('refuses an id that could widen a subject', () => {
    expect(() => identityPermissions(names, '*')).toThrow();
    expect(() => identityPermissions(names, 'a.>')).toThrow();
    expect(() => identityInboxPrefix('>')).toThrow();
  });
});

describe('hubServicePermissions', () => {
  const p = hubServicePermissions(names);

  it('covers the hub streams and buckets, and never stream deletion', () => {
    expect(p.pub.allow).toContain('$JS.API.STREAM.CREATE.ACME_WAL');
    expect(p.pub.allow).toContain('$JS.API.STREAM.PURGE.ACME_INBOX');
    expect(p.pub.allow).toContain('$JS.API.DIRECT.GET.KV_ACME_agents.>');
    expect(p.pub.allow).toContain('$JS.API.CONSUMER.MSG.NEXT.ACME_WAL.*');
    expect(p.pub.allow).toContain('$KV.ACME_channels.>');
    expect(p.pub.allow).toContain('$JS.ACK.ACME_WAL.*.>');
    expect(p.pub.allow).toContain('$KV.ACME_turn_locks.>');
    expect(p.pub.allow).toContain('$JS.API.STREAM.MSG.GET.KV_ACME_turn_locks');
    expect(p.pub.allow).toContain('$JS.API.DIRECT.GET.KV_ACME_turn_locks.>');
    expect(p.pub.allow.filter((s) => s.includes('DELETE.') && s.includes('STREAM'))).toEqual([]);
    expect(p.pub.allow.filter((s) => s === '>' || s === '$JS.API.>')).toEqual([]);
  });

  it('may not purge, read or pull anything an identity owns, nor purge the audit trail or a bucket', () => {
    const purges = p.pub.allow.filter((s) => s.startsWith('$JS.API.STREAM.PURGE.'));
    // The WAL's purge is for a channel's subject after its retention; the inbox's for an unregistered identity.
    expect(purges).toEqual(['$JS.API.STREAM.PURGE.ACME_WAL', '$JS.API.STREAM.PURGE.ACME_INBOX']);
    expect(
      p.pub.allow.filter((s) => s.includes('ACME_INBOX') && /MSG\.NEXT|MSG\.GET|DIRECT\.GET|\$JS\.FC/.test(s)),
    ).toEqual([]);
    expect(p.pub.allow.filter((s) => s.startsWith('$JS.ACK.'))).toEqual(['$JS.ACK.ACME_WAL.*.>']);
  });

  it("subscribes only to its RPC subjects, the roster, the hubs' presence and its own reply inbox, and answers each request once", () => {
    expect(p.sub.allow).toEqual(['acme.hub.v1.>', 'acme.hubs.v1.ping', 'acme.hubs.v1.alive.*', '_HUB_INBOX_acme.>']);
    expect(p.pub.allow).toContain('acme.hubs.v1.alive.*');
    expect(names.hubAlive('hub-2')).toBe('acme.hubs.v1.alive.hub-2');
    expect(hubServiceInboxPrefix(names)).toBe('_HUB_INBOX_acme');
    expect(p.resp).toEqual({ max: 1, ttlMs: 0 });
  });
});

describe('registrant, operator caller and operator', () => {
  it('the operator caller may call as $operator, ask the roster and call the public operations, nothing else', () => {
    const caller = operatorCallerPermissions(names);
    expect(caller).toEqual({
      pub: {
        allow: [
          'acme.hub.v1.*.$operator',
          'acme.hub.v1.*.*.$operator',
          'acme.hubs.v1.ping',
          'acme.hub.v1.register',
          'acme.hub.v1.getAgent',
          'acme.hub.v1.getResume',
          'acme.hub.v1.getSkill',
          'acme.hub.v1.getRule',
          'acme.hub.v1.findAgentId',
          'acme.hub.v1.listAgents',
          'acme.hub.v1.health',
        ],
        deny: [],
      },
      sub: { allow: ['_OPERATOR_INBOX_acme.>'], deny: [] },
    });
    expect(caller.pub.allow.filter((s) => s.startsWith('$'))).toEqual([]);
    expect(
      allowedOf(caller.pub.allow, [
        partitioned.rpcIn('readWal', 1, '$operator'),
        partitioned.rpcIn('readWal', 1, 'alice-1'),
        'acme.hub.v1.readWal.1',
      ]),
    ).toEqual(['acme.hub.v1.readWal.1.$operator']);
  });

  it('the registrant may only register, attach and ask for health', () => {
    expect(registrantPermissions(names)).toEqual({
      pub: { allow: ['acme.hub.v1.register', 'acme.hub.v1.attach', 'acme.hub.v1.health'], deny: [] },
      sub: { allow: ['_REGISTRANT_INBOX_acme.>'], deny: [] },
    });
  });

  it('only the operator may ask the roster; only hubs answer it', () => {
    expect(names.hubsPing).toBe('acme.hubs.v1.ping');
    const identity = identityPermissions(names, 'alice-1');
    const registrant = registrantPermissions(names);
    for (const { pub, sub } of [identity, registrant]) {
      expect([...pub.allow, ...sub.allow].filter((s) => s.startsWith('acme.hubs') || s === '>')).toEqual([]);
    }
    // A hub probes the others' presence (nothing answers there) but does not ask the roster.
    expect(hubServicePermissions(names).pub.allow.filter((s) => s.startsWith('acme.hubs'))).toEqual([
      'acme.hubs.v1.alive.*',
    ]);
    const operator = operatorPermissions(names);
    expect(operator.pub.allow).toEqual(['>']);
    expect(operator.pub.deny.filter((s) => s.startsWith('acme.hubs'))).toEqual([]);
  });

  it('the operator may not write the WAL, the inboxes or the lease', () => {
    expect(operatorPermissions(names).pub.deny).toEqual(['acme.wal.>', 'acme.agent.*.inbox', '$KV.ACME_leases.>']);
  });
});
