import { describe, expect, it } from 'vitest';
import {
  AuthBlockSchema,
  CostProfileSchema,
  ObservedStatSchema,
  PASSPORT_KINDS,
  PassportSchema,
  ResumeExampleSchema,
  ResumeSchema,
  effectiveKind,
} from '@ag2net/protocol';

describe('Passport', () => {
  it("fills AG2's defaults, in AG2's field order", () => {
    const passport = PassportSchema.parse({ name: 'alice' });
    expect(passport).toStrictEqual({
      name: 'alice',
      owner: '',
      provider: null,
      model: null,
      cost: null,
      region: null,
      auth: { scheme: 'none', issuer: null, audience: null, key_fingerprint: null, claim: {} },
      kind: null,
      hub_id: null,
      version: 1,
      agent_id: null,
      created_at: '',
    });
    expect(Object.keys(passport)).toEqual([
      'name',
      'owner',
      'provider',
      'model',
      'cost',
      'region',
      'auth',
      'kind',
      'hub_id',
      'version',
      'agent_id',
      'created_at',
    ]);
  });

  it('rejects a kind outside PASSPORT_KINDS with the AG2 message', () => {
    const result = PassportSchema.safeParse({ name: 'carol', kind: 'huMAn' });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.path).toEqual(['kind']);
    expect(result.error?.issues[0]?.message).toBe(
      "Passport.kind must be one of ('agent', 'human', 'remote_agent') or null; got 'huMAn'",
    );
  });

  it('accepts every passport kind and null', () => {
    for (const kind of [...PASSPORT_KINDS, null]) {
      expect(PassportSchema.parse({ name: 'x', kind }).kind).toBe(kind);
    }
  });

  it('lists the kinds agent, human and remote_agent', () => {
    expect(PASSPORT_KINDS).toEqual(['agent', 'human', 'remote_agent']);
  });

  it('defaults hub_id to null and round-trips it with kind remote_agent', () => {
    const remote = PassportSchema.parse({ name: 'translator', kind: 'remote_agent', hub_id: 'other-hub' });
    expect(PassportSchema.parse(JSON.parse(JSON.stringify(remote))).hub_id).toBe('other-hub');
    expect(remote.kind).toBe('remote_agent');
    expect(PassportSchema.parse({ name: 'x' }).hub_id).toBeNull();
  });

  it('rejects an empty name with "Passport.name must not be empty"', () => {
    expect(PassportSchema.safeParse({ name: '' }).error?.issues[0]?.message).toBe('Passport.name must not be empty');
  });

  it('rejects unknown keys', () => {
    expect(PassportSchema.safeParse({ name: 'alice', role: 'admin' }).error?.issues[0]?.code).toBe('unrecognized_keys');
  });
});

describe('effectiveKind', () => {
  it('is agent when kind is null, else the kind', () => {
    expect(effectiveKind({ kind: null })).toBe('agent');
    expect(effectiveKind({ kind: 'human' })).toBe('human');
    expect(effectiveKind({ kind: 'remote_agent' })).toBe('remote_agent');
    expect(effectiveKind(PassportSchema.parse({ name: 'a' }))).toBe('agent');
  });
});

describe('AuthBlock and CostProfile', () => {
  it('default to scheme none with no claim and to an unknown cost', () => {
    expect(AuthBlockSchema.parse({})).toStrictEqual({
      scheme: 'none',
      issuer: null,
      audience: null,
      key_fingerprint: null,
      claim: {},
    });
    expect(CostProfileSchema.parse({})).toStrictEqual({
      input_per_mtok: null,
      output_per_mtok: null,
      latency_tier: null,
    });
  });
});

describe('Resume', () => {
  it("fills AG2's defaults", () => {
    expect(ResumeSchema.parse({})).toStrictEqual({
      claimed_capabilities: [],
      domains: [],
      summary: '',
      examples: [],
      observed: {},
      version: 1,
      last_updated: '',
    });
  });

  it('fills ObservedStat defaults inside observed', () => {
    expect(ResumeSchema.parse({ observed: { code_review: { n: 2, completed: 1 } } }).observed).toStrictEqual({
      code_review: { n: 2, completed: 1, failed: 0, expired: 0, p50_latency_ms: null },
    });
  });

  it('fills ResumeExample defaults and requires a title', () => {
    expect(ResumeExampleSchema.parse({ title: 'Reviewed a PR' })).toStrictEqual({
      title: 'Reviewed a PR',
      outcome: '',
      task_id: null,
      channel_id: null,
      when: null,
      note: '',
    });
    expect(ResumeExampleSchema.safeParse({}).success).toBe(false);
  });
});

describe('ObservedStat', () => {
  it('defaults every count to 0 and the latency to null', () => {
    expect(ObservedStatSchema.parse({})).toStrictEqual({
      n: 0,
      completed: 0,
      failed: 0,
      expired: 0,
      p50_latency_ms: null,
    });
  });

  it('rejects negative counts', () => {
    expect(ObservedStatSchema.safeParse({ failed: -1 }).success).toBe(false);
  });
});
