import { defaultRule } from '@ag2net/protocol/internal';
import { NetworkError, newId } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPERATOR_LIMITS } from '../src/index.js';
import { withinCeilings } from '../src/governance/operator-limits.js';
import { T0, ULID, at, failure, nowIso, openChannel, openNet, rawFailure, register, say } from './support.js';

const nats = natsPerFile();

describe('register', () => {
  it('stamps a ULID agent_id and the clock time on the passport', async () => {
    await using net = await openNet(nats.url);
    const { passport } = await net.rpc.call('register', { passport: { name: 'alice', owner: 'acme' } });
    expect(passport.agent_id).toMatch(ULID);
    expect(passport).toEqual({
      name: 'alice',
      owner: 'acme',
      provider: null,
      model: null,
      cost: null,
      region: null,
      auth: { scheme: 'none', issuer: null, audience: null, key_fingerprint: null, claim: {} },
      kind: null,
      hub_id: null,
      version: 1,
      agent_id: passport.agent_id,
      created_at: T0,
    });
  });

  it('refuses a second agent with a taken name and names the holder', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const second = net.rpc.call('register', { passport: { name: 'alice' } });
    expect(await failure(second)).toEqual({
      code: 'protocol_error',
      message: `name 'alice' already registered (agent_id=${alice.id}); unregister it before re-registering.`,
    });
    // Callers tell this refusal apart by its details, never by the message.
    await expect(second).rejects.toMatchObject({ details: { reason: 'name_taken', agent_id: alice.id } });
    const { agents } = await net.rpc.call('listAgents', {});
    expect(agents.map((p) => p.agent_id)).toEqual([alice.id]);
  });

  it('admits exactly one of three concurrent registers of the same name', async () => {
    await using net = await openNet(nats.url);
    const outcomes = await Promise.all(
      [1, 2, 3].map(async () => {
        try {
          return { id: (await net.rpc.call('register', { passport: { name: 'dup' } })).passport.agent_id };
        } catch (err) {
          return { error: err instanceof NetworkError ? `${err.code}: ${err.message}` : String(err) };
        }
      }),
    );
    const ids = outcomes.flatMap((o) => ('id' in o ? [o.id] : []));
    expect(ids).toHaveLength(1);
    const taken = `protocol_error: name 'dup' already registered (agent_id=${ids[0]}); unregister it before re-registering.`;
    expect(outcomes.flatMap((o) => ('error' in o ? [o.error] : []))).toEqual([taken, taken]);
    const { agents } = await net.rpc.call('listAgents', {});
    expect(agents.map((p) => p.agent_id)).toEqual(ids);
  });

  it('returns the same passport when a register is retried with the stamped agent_id and name', async () => {
    await using net = await openNet(nats.url);
    const first = await register(net, 'alice');
    net.clock.advance(5_000);
    const { passport } = await net.rpc.call('register', { passport: { name: 'alice', agent_id: first.id } });
    expect(passport).toEqual(first.passport);
    const { agents } = await net.rpc.call('listAgents', {});
    expect(agents).toHaveLength(1);
  });

  it('refuses a body with an unknown key or without a name as invalid_request and registers nobody', async () => {
    await using net = await openNet(nats.url);
    const subject = net.names.rpc('register');
    const unknownKey = await rawFailure(net, subject, JSON.stringify({ passport: { name: 'alice', nickname: 'al' } }));
    expect(unknownKey.code).toBe('invalid_request');
    const noName = await rawFailure(net, subject, JSON.stringify({ passport: { owner: 'acme' } }));
    expect(noName.code).toBe('invalid_request');
    const extraTopLevel = await rawFailure(net, subject, JSON.stringify({ passport: { name: 'alice' }, admin: true }));
    expect(extraTopLevel.code).toBe('invalid_request');
    const notJson = await rawFailure(net, subject, '{"passport": ');
    expect(notJson.code).toBe('invalid_request');
    const { agents } = await net.rpc.call('listAgents', {});
    expect(agents).toEqual([]);
    expect((await net.rpc.call('health', {})).registered_agents).toBe(0);
  });

  it('gives a new agent_id to a name registered again after unregister', async () => {
    await using net = await openNet(nats.url);
    const first = await register(net, 'alice');
    await net.rpc.call('unregister', {}, { caller: first.id });
    const { passport } = await net.rpc.call('register', { passport: { name: 'alice' } });
    expect(passport.agent_id).toMatch(ULID);
    expect(passport.agent_id).not.toBe(first.id);
  });
});

describe('lookups', () => {
  it('getAgent finds an agent by name and by id, and says which one it cannot find', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    expect((await net.rpc.call('getAgent', { name_or_id: 'alice' })).passport).toEqual(alice.passport);
    expect((await net.rpc.call('getAgent', { name_or_id: alice.id })).passport).toEqual(alice.passport);
    expect(await failure(net.rpc.call('getAgent', { name_or_id: 'x' }))).toEqual({
      code: 'not_found',
      message: 'agent not found: x',
    });
  });

  it('getResume returns the registered resume and names an unknown agent', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { resume: { claimed_capabilities: ['math'], summary: 'Statistician' } });
    const { resume } = await net.rpc.call('getResume', { agent_id: alice.id });
    expect(resume).toEqual({
      claimed_capabilities: ['math'],
      domains: [],
      summary: 'Statistician',
      examples: [],
      observed: {},
      version: 1,
      last_updated: '',
    });
    expect(await failure(net.rpc.call('getResume', { agent_id: 'x' }))).toEqual({
      code: 'not_found',
      message: 'resume not found: x',
    });
  });

  it('getRule returns the default rule for an agent registered without one and names an unknown agent', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    // The default rule held under the operator's default ceilings (no cap becomes the ceiling).
    expect((await net.rpc.call('getRule', { agent_id: alice.id })).rule).toEqual(
      withinCeilings(defaultRule(), DEFAULT_OPERATOR_LIMITS),
    );
    expect(await failure(net.rpc.call('getRule', { agent_id: 'x' }))).toEqual({
      code: 'not_found',
      message: 'rule not found: x',
    });
  });

  it('getSkill returns the registered SKILL.md, or null when there is none', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { skillMd: '# Alice\nAnswers statistics questions.' });
    const bob = await register(net, 'bob');
    expect((await net.rpc.call('getSkill', { agent_id: alice.id })).skill_md).toBe(
      '# Alice\nAnswers statistics questions.',
    );
    expect((await net.rpc.call('getSkill', { agent_id: bob.id })).skill_md).toBeNull();
    expect((await net.rpc.call('getSkill', { agent_id: newId() })).skill_md).toBeNull();
  });

  it('findAgentId maps a name to its id, and an unknown name to null', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    expect((await net.rpc.call('findAgentId', { name: 'alice' })).agent_id).toBe(alice.id);
    expect((await net.rpc.call('findAgentId', { name: 'nobody' })).agent_id).toBeNull();
  });
});

describe('listAgents', () => {
  async function population(url: string) {
    const net = await openNet(url);
    // Registered out of name order, so that sort_by has something to do.
    await register(net, 'dave', { passport: { kind: 'agent' }, resume: { summary: 'Writes reports' } });
    await register(net, 'carol', {
      passport: { kind: 'human' },
      resume: { claimed_capabilities: ['math'], summary: 'Reviews proofs' },
    });
    await register(net, 'bob', { resume: { claimed_capabilities: ['writing'], summary: 'Junior copywriter' } });
    await register(net, 'alice', {
      resume: { claimed_capabilities: ['math', 'stats'], summary: 'Senior statistician' },
    });
    return net;
  }

  const names = (agents: readonly { name: string }[]) => agents.map((a) => a.name);

  it('filters by claimed capability', async () => {
    await using net = await population(nats.url);
    const { agents } = await net.rpc.call('listAgents', { capability: 'math', sort_by: 'name' });
    expect(names(agents)).toEqual(['alice', 'carol']);
    expect((await net.rpc.call('listAgents', { capability: 'cooking' })).agents).toEqual([]);
  });

  it('filters by a case-insensitive substring of the resume summary only', async () => {
    await using net = await population(nats.url);
    expect(names((await net.rpc.call('listAgents', { query: 'SENIOR' })).agents)).toEqual(['alice']);
    expect(names((await net.rpc.call('listAgents', { query: 'r', sort_by: 'name' })).agents)).toEqual([
      'alice',
      'bob',
      'carol',
      'dave',
    ]);
    // A name is not part of the summary.
    expect((await net.rpc.call('listAgents', { query: 'bob' })).agents).toEqual([]);
  });

  it('filters by kind, a passport without kind counting as agent', async () => {
    await using net = await population(nats.url);
    const agentsOnly = await net.rpc.call('listAgents', { kind: 'agent', sort_by: 'name' });
    expect(names(agentsOnly.agents)).toEqual(['alice', 'bob', 'dave']);
    expect(names((await net.rpc.call('listAgents', { kind: 'human' })).agents)).toEqual(['carol']);
    expect((await net.rpc.call('listAgents', { kind: 'remote_agent' })).agents).toEqual([]);
  });

  it('sorts by name and then applies the limit', async () => {
    await using net = await population(nats.url);
    expect(names((await net.rpc.call('listAgents', { sort_by: 'name' })).agents)).toEqual([
      'alice',
      'bob',
      'carol',
      'dave',
    ]);
    expect(names((await net.rpc.call('listAgents', { sort_by: 'name', limit: 2 })).agents)).toEqual(['alice', 'bob']);
    expect((await net.rpc.call('listAgents', { limit: 3 })).agents).toHaveLength(3);
  });
});

describe('mutations', () => {
  it('setResume bumps the version, stamps last_updated with the clock and moves the capability index', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { resume: { claimed_capabilities: ['math'], summary: 'old' } });
    net.clock.advance(60_000);
    const { resume } = await net.rpc.call(
      'setResume',
      { resume: { claimed_capabilities: ['new-skill'], summary: 'updated' } },
      { caller: alice.id },
    );
    expect(resume).toMatchObject({
      claimed_capabilities: ['new-skill'],
      summary: 'updated',
      version: 2,
      last_updated: at(60_000),
    });
    expect((await net.rpc.call('getResume', { agent_id: alice.id })).resume).toEqual(resume);
    const withNew = await net.rpc.call('listAgents', { capability: 'new-skill' });
    expect(withNew.agents.map((p) => p.agent_id)).toEqual([alice.id]);
    expect((await net.rpc.call('listAgents', { capability: 'math' })).agents).toEqual([]);
    expect((await net.rpc.call('listAgents', { query: 'UPDATED' })).agents).toHaveLength(1);
  });

  it('setRule bumps the version and getRule returns the new rule', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const { rule } = await net.rpc.call('setRule', { rule: { limits: { delegation_depth: 3 } } }, { caller: alice.id });
    expect(rule.version).toBe(2);
    expect(rule.limits.delegation_depth).toBe(3);
    expect((await net.rpc.call('getRule', { agent_id: alice.id })).rule).toEqual(rule);
  });

  it('unregister removes the agent: lookups fail and its posts are refused as from an unknown caller', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const channel = await openChannel(net, alice, 'conversation', [bob]);
    await say(net, alice, channel.channel_id, 'before');

    await net.rpc.call('unregister', {}, { caller: alice.id });

    expect(await failure(net.rpc.call('getAgent', { name_or_id: alice.id }))).toEqual({
      code: 'not_found',
      message: `agent not found: ${alice.id}`,
    });
    expect((await net.rpc.call('findAgentId', { name: 'alice' })).agent_id).toBeNull();
    expect(await failure(say(net, alice, channel.channel_id, 'after'))).toEqual({
      code: 'access_denied',
      message: `unknown caller '${alice.id}'`,
    });
    const { agents } = await net.rpc.call('listAgents', {});
    expect(agents.map((p) => p.name)).toEqual(['bob']);
    // The channel and its log outlive the agent (AG2 keeps them).
    const wal = await net.rpc.call('readWal', { channel_id: channel.channel_id }, { caller: bob.id });
    expect(wal.envelopes.at(-1)?.event_data).toEqual({ text: 'before' });
  });

  it('registration timestamps follow the injected clock', async () => {
    await using net = await openNet(nats.url);
    net.clock.advance(90_000);
    const bob = await register(net, 'bob');
    expect(bob.passport.created_at).toBe(nowIso(net));
    expect(bob.passport.created_at).toBe(at(90_000));
  });
});
