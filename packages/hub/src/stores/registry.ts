import {
  NotFoundError,
  PassportSchema,
  ErrorReason,
  ProtocolError,
  ResumeSchema,
  effectiveKind,
  type Passport,
  type PassportKind,
  type Resume,
  type Rule,
} from '@ag2net/protocol';
import { StoredRuleSchema, UserPublicKeySchema, defaultRule, repr } from '@ag2net/protocol/internal';
import type { KvEntry } from '@nats-io/kv';
import type { FencedKv } from '../nats/fenced-kv.js';
import { z } from 'zod';
import { parseJson } from '../base/parse-json.js';
import { StoredCredentialsSchema, type StoredCredentials } from '../auth/credential-state.js';
import type { Quarantine } from '../base/quarantined-record.js';

/** One registered agent as the hub holds it. */
export interface AgentRecord {
  passport: Passport;
  resume: Resume;
  rule: Rule;
  skill: string | null;
  /**
   * The nkey user public key the identity registered with, which its credentials are issued for; `null` for an
   * identity registered on a hub that issued no credentials.
   */
  publicKey: string | null;
  /**
   * Which of its JWTs the hub still honours, and whether the operator revoked it (`StoredCredentials`); `null` for
   * an identity the hub never issued credentials to.
   */
  credentials: StoredCredentials | null;
}

/** Filters of `list`. */
export interface ListAgentsFilter {
  readonly capability: string | null;
  readonly query: string | null;
  readonly kind: PassportKind | null;
  readonly sortBy: 'name' | null;
  readonly limit: number;
}

const PARTS = ['passport', 'resume', 'rule', 'skill', 'nkey', 'credentials'] as const;

/** The stored `<agent_id>.nkey` part: the public key the identity's credentials are issued for. */
const StoredKeySchema = z.strictObject({ public_key: UserPublicKeySchema });
/** How many agents `load` reads at once. */
const LOAD_WINDOW = 32;

/**
 * The agents of one hub: an in-memory index over the KV bucket `<PREFIX>_agents` (keys `<agent_id>.passport`,
 * `.resume`, `.rule`, `.skill`, `.nkey`, `.credentials`). Writes go to KV first, then to memory.
 */
export class AgentRegistry {
  readonly #byId = new Map<string, AgentRecord>();
  readonly #byName = new Map<string, string>();

  constructor(private readonly kv: FencedKv) {}

  get size(): number {
    return this.#byId.size;
  }

  /**
   * Rebuilds the index from KV (keys `<agent_id>.passport`, `.resume`, `.rule`, `.skill`, `.nkey`, `.credentials`). An agent whose passport, resume or rule does not parse, or whose passport names
   * another id than its key, is quarantined and left out whole: serving it with a default rule could widen what it
   * may do. Agents are read a window at a time, each with its four gets in flight together (one round trip each in
   * turn would make a cold start grow by four round trips per agent).
   */
  async load(quarantine: Quarantine): Promise<void> {
    this.#byId.clear();
    this.#byName.clear();
    const ids = new Set<string>();
    for await (const key of await this.kv.keys()) {
      const dot = key.lastIndexOf('.');
      if (dot > 0) ids.add(key.slice(0, dot));
    }
    const sorted = [...ids].sort();
    for (let i = 0; i < sorted.length; i += LOAD_WINDOW) {
      const window = sorted.slice(i, i + LOAD_WINDOW);
      const records = await Promise.all(window.map((id) => this.#loadOne(id, quarantine)));
      for (const record of records) if (record !== null) this.#index(record);
    }
  }

  /**
   * Reads one agent again from KV and indexes what it finds there: its record, or nothing when it has no valid
   * passport (unregistered, quarantined, not written yet). How a hub that does not write the registry follows it.
   */
  async refresh(agentId: string, quarantine: Quarantine): Promise<void> {
    const record = await this.#loadOne(agentId, quarantine);
    const before = this.#byId.get(agentId);
    if (before !== undefined && (record === null || before.passport.name !== record.passport.name)) {
      this.#byId.delete(agentId);
      if (this.#byName.get(before.passport.name) === agentId) this.#byName.delete(before.passport.name);
    }
    if (record !== null) this.#index(record);
  }

  /** One agent's record from KV, or `null` when it has no valid passport or a part is quarantined. */
  async #loadOne(id: string, quarantine: Quarantine): Promise<AgentRecord | null> {
    const [passportEntry, resumeEntry, ruleEntry, skillEntry, keyEntry, credentialsEntry] = await Promise.all(
      PARTS.map((part) => this.kv.get(`${id}.${part}`)),
    );
    const passport = parsePart(passportEntry, PassportSchema, quarantine);
    if (passport === null || passport === 'invalid') return null;
    if (passport.value.agent_id !== id) {
      quarantine({
        source: 'agents',
        key: `${id}.passport`,
        seq: passport.revision,
        reason: `passport of ${String(passport.value.agent_id)} under the key of ${id}`,
      });
      return null;
    }
    const resume = parsePart(resumeEntry, ResumeSchema, quarantine);
    const rule = parsePart(ruleEntry, StoredRuleSchema, quarantine);
    // A malformed key leaves the agent out too: issuing for a key nobody registered would hand out its identity.
    const key = parsePart(keyEntry, StoredKeySchema, quarantine);
    // A malformed credentials state leaves it out too: it may be what says the identity is revoked.
    const credentials = parsePart(credentialsEntry, StoredCredentialsSchema, quarantine);
    if (resume === 'invalid' || rule === 'invalid' || key === 'invalid' || credentials === 'invalid') return null;
    return {
      passport: passport.value,
      resume: resume?.value ?? ResumeSchema.parse({}),
      rule: rule?.value ?? defaultRule(),
      skill:
        skillEntry !== null && skillEntry !== undefined && skillEntry.operation === 'PUT' ? skillEntry.string() : null,
      publicKey: key?.value.public_key ?? null,
      credentials: credentials?.value ?? null,
    };
  }

  #index(record: AgentRecord): void {
    const id = record.passport.agent_id;
    if (id === null) return;
    this.#byId.set(id, record);
    this.#byName.set(record.passport.name, id);
  }

  /** Registers a stamped passport; a name already taken by another id is a `ProtocolError` (AG2's message). */
  async add(record: AgentRecord): Promise<AgentRecord> {
    const id = record.passport.agent_id;
    if (id === null) throw new TypeError('passport must be stamped before it is added');
    const existing = this.#byName.get(record.passport.name);
    if (existing !== undefined && existing !== id) throw nameTakenError(record.passport.name, existing);
    // The key goes first: a crash before the passport leaves a key nobody loads, never a passport without its key.
    if (record.publicKey !== null) await this.kv.put(`${id}.nkey`, JSON.stringify({ public_key: record.publicKey }));
    await this.kv.put(`${id}.passport`, JSON.stringify(record.passport));
    await this.kv.put(`${id}.resume`, JSON.stringify(record.resume));
    await this.kv.put(`${id}.rule`, JSON.stringify(record.rule));
    if (record.skill !== null) await this.kv.put(`${id}.skill`, record.skill);
    if (record.credentials !== null) await this.kv.put(`${id}.credentials`, JSON.stringify(record.credentials));
    this.#index(record);
    return record;
  }

  /** Stores an identity's credential state (`StoredCredentials`). */
  async setCredentials(agentId: string, credentials: StoredCredentials): Promise<StoredCredentials> {
    const record = this.require(agentId);
    await this.kv.put(`${agentId}.credentials`, JSON.stringify(credentials));
    record.credentials = credentials;
    return credentials;
  }

  async remove(agentId: string): Promise<AgentRecord> {
    const record = this.require(agentId);
    for (const part of PARTS) await this.kv.purge(`${agentId}.${part}`);
    this.#byId.delete(agentId);
    this.#byName.delete(record.passport.name);
    return record;
  }

  async setResume(agentId: string, resume: Resume): Promise<Resume> {
    const record = this.require(agentId);
    await this.kv.put(`${agentId}.resume`, JSON.stringify(resume));
    record.resume = resume;
    return resume;
  }

  async setRule(agentId: string, rule: Rule): Promise<Rule> {
    const record = this.require(agentId);
    await this.kv.put(`${agentId}.rule`, JSON.stringify(rule));
    record.rule = rule;
    return rule;
  }

  async setSkill(agentId: string, skill: string | null): Promise<void> {
    const record = this.require(agentId);
    if (skill === null) await this.kv.purge(`${agentId}.skill`);
    else await this.kv.put(`${agentId}.skill`, skill);
    record.skill = skill;
  }

  get(agentId: string): AgentRecord | undefined {
    return this.#byId.get(agentId);
  }

  /** The record of a registered agent; `NotFoundError` "agent not registered: <id>" otherwise. */
  require(agentId: string): AgentRecord {
    const record = this.#byId.get(agentId);
    if (record === undefined) throw new NotFoundError(`agent not registered: ${agentId}`);
    return record;
  }

  idForName(name: string): string | null {
    return this.#byName.get(name) ?? null;
  }

  /** By name first, then by id (AG2's `get_agent`). */
  lookup(nameOrId: string): AgentRecord | undefined {
    const id = this.#byName.get(nameOrId);
    return id !== undefined ? this.#byId.get(id) : this.#byId.get(nameOrId);
  }

  nameOf(agentId: string): string {
    return this.#byId.get(agentId)?.passport.name ?? agentId;
  }

  /** AG2's `list_agents`: agent-id order, filtered, optionally sorted by name, then limited. */
  list(filter: ListAgentsFilter): Passport[] {
    const query = filter.query?.toLowerCase() ?? null;
    let records = this.all().filter((r) => {
      if (filter.kind !== null && effectiveKind(r.passport) !== filter.kind) return false;
      if (filter.capability !== null && !capabilitiesOf(r.resume).has(filter.capability)) return false;
      if (query !== null && !r.resume.summary.toLowerCase().includes(query)) return false;
      return true;
    });
    if (filter.sortBy === 'name') records = records.sort((a, b) => a.passport.name.localeCompare(b.passport.name));
    return records.slice(0, filter.limit).map((r) => r.passport);
  }

  /**
   * Every record in agent-id order. Ids are ULIDs, so this is registration order for hub-minted ids, and it is the
   * same order after a restart, whatever order KV returns keys in.
   */
  all(): AgentRecord[] {
    return [...this.#byId.values()].sort((a, b) => compareIds(a.passport.agent_id, b.passport.agent_id));
  }
}

/** `register` of a name another identity holds: `protocol_error`, reason `name_taken` (AG2's message). */
export function nameTakenError(name: string, holderId: string): ProtocolError {
  return new ProtocolError(
    `name ${repr(name)} already registered (agent_id=${holderId}); unregister it before re-registering.`,
    { details: { reason: ErrorReason.NameTaken, agent_id: holderId } },
  );
}

/** Claimed and observed capabilities of a resume. */
export function capabilitiesOf(resume: Resume): Set<string> {
  return new Set([...resume.claimed_capabilities, ...Object.keys(resume.observed)]);
}

function compareIds(a: string | null, b: string | null): number {
  return (a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0;
}

/** A stored part parsed with `schema`; `null` when absent, `invalid` (quarantined) when it does not parse. */
function parsePart<T>(
  entry: KvEntry | null | undefined,
  schema: z.ZodType<T>,
  quarantine: Quarantine,
): { value: T; revision: number } | null | 'invalid' {
  if (entry === null || entry === undefined || entry.operation !== 'PUT') return null;
  const parsed = parseJson(entry.string(), schema);
  if (parsed.ok) return { value: parsed.value, revision: entry.revision };
  quarantine({ source: 'agents', key: entry.key, seq: entry.revision, reason: parsed.reason });
  return 'invalid';
}
