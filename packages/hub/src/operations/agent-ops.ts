import {
  AccessDeniedError,
  AuthError,
  InvalidRequestError,
  NotFoundError,
  ProtocolError,
  RemoteAgentOwnerError,
  TaskState,
  effectiveKind,
  isTerminalTaskState,
  type IssuedCredentials,
  type Passport,
  type Resume,
  type Rule,
} from '@ag2net/protocol';
import { type HubRequestParsed, defaultRule, repr } from '@ag2net/protocol/internal';
import { AuditKind, ResumeSource } from '@ag2net/protocol';
import { isoAt } from '../base/clock.js';
import { withinCeilings } from '../governance/operator-limits.js';
import { ensureInboxConsumer, removeInbox } from '../nats/provision.js';
import { refusedAdmission, storedAuth } from '../auth/authenticator.js';
import { issueFor, type IssueDeps } from './issuance.js';
import { nameTakenError, type AgentRecord } from '../stores/registry.js';
import type { HomeStores, HubEnv, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** What registering an identity uses. */
export type RegisterDeps = IssueDeps &
  Pick<HubEnv, 'clock' | 'ids' | 'inboxAckWaitMs' | 'jsm' | 'limits' | 'names'> &
  Pick<HomeStores, 'audit' | 'authenticator'> &
  PartitionPick<'serial'>;

/** What removing an identity uses. */
export type UnregisterDeps = Pick<HubEnv, 'jsm' | 'names' | 'logger'> &
  Pick<HomeStores, 'registry' | 'audit'> &
  Pick<HubPolicies, 'inboxes' | 'rateLimiter'> &
  PartitionPick<'serial'>;

/** What changing an agent's resume uses. */
export type ResumeDeps = Pick<HubEnv, 'clock'> & Pick<HomeStores, 'registry' | 'audit'> & PartitionPick<'serial'>;

/** What counting a task's outcome in its owner's resume uses. */
export type ObservationDeps = ResumeDeps & Pick<HomeStores, 'tasks'>;

/** Serializes everything that adds, removes or issues for an identity: one registry-wide key. */
export const REGISTRY_KEY = '\u0000registry';

/** What `register` answers: the stored passport and, on a hub that issues them, the identity's credentials. */
export interface Registered {
  readonly passport: Passport;
  readonly credentials: IssuedCredentials | null;
}

/**
 * Registers an identity (AG2's `register_identity`): admits it (the hub's authenticator checks the passport's auth
 * block), refuses a taken name, stamps the id and registration time, stores passport, resume, rule, skill and public
 * key, and creates the agent's durable inbox. The claim is never stored: the passport keeps the scheme and the
 * token's fingerprint (`storedAuth`). On a hub that issues credentials, `public_key` is required and the answer
 * carries a JWT for it.
 *
 * A retry is answered with the same identity (and, on a secured hub, a fresh JWT): a passport that names the
 * `agent_id` its name is registered under, or on a secured hub the same name with the registered public key. The
 * same name with another key is `name_taken`, whatever the passport says.
 */
export async function register(ctx: RegisterDeps, req: HubRequestParsed<'register'>): Promise<Registered> {
  const { passport } = req;
  const publicKey = ctx.issuer === null ? null : req.public_key;
  if (ctx.issuer !== null && publicKey === null) {
    throw new InvalidRequestError(
      "this hub issues credentials: register needs public_key, the nkey user public key of the identity's key pair",
    );
  }
  await admit(ctx, passport.name, passport);
  const auth = storedAuth(passport.auth);
  return ctx.partition.serial.run(REGISTRY_KEY, async () => {
    const existingId = ctx.registry.idForName(passport.name);
    if (existingId !== null) {
      const known = ctx.registry.require(existingId);
      if (!isRetry(known, passport.agent_id, publicKey)) throw nameTakenError(passport.name, existingId);
      await auditRegistered(ctx, known.passport);
      return { passport: known.passport, credentials: await issueFor(ctx, known) };
    }
    if (passport.agent_id !== null && ctx.registry.get(passport.agent_id) !== undefined) {
      throw new ProtocolError(`agent_id ${repr(passport.agent_id)} is already registered under another name`);
    }
    const nowMs = ctx.clock.now();
    const stamped: Passport = {
      ...passport,
      auth,
      agent_id: passport.agent_id ?? ctx.ids(nowMs),
      created_at: isoAt(nowMs),
    };
    const record = await ctx.registry.add({
      passport: stamped,
      // `observed` is the hub's to write, from what it sees the agent do.
      resume: { ...req.resume, observed: {} },
      // The operator's ceilings hold: an agent's own rule can only be stricter.
      rule: withinCeilings(req.rule ?? defaultRule(), ctx.limits),
      skill: req.skill_md,
      publicKey,
      credentials: null,
    });
    await ensureInboxConsumer(ctx.jsm, ctx.names, { agentId: stamped.agent_id ?? '', ackWaitMs: ctx.inboxAckWaitMs });
    ctx.logger.info({ agent: stamped.name, agentId: stamped.agent_id }, 'agent registered');
    await auditRegistered(ctx, record.passport);
    return { passport: record.passport, credentials: await issueFor(ctx, record) };
  });
}

/**
 * Whether a registration of a taken name is a retry by its holder. Unsecured: the passport names the registered id.
 * Secured: the public key is the registered one (only its holder can use what the hub issues for it), and an id, if
 * the passport names one, is the registered id.
 */
function isRetry(known: AgentRecord, agentId: string | null, publicKey: string | null): boolean {
  const id = known.passport.agent_id;
  if (publicKey === null) return agentId !== null && agentId === id;
  return known.publicKey === publicKey && (agentId === null || agentId === id);
}

/**
 * Lets the hub's authenticator decide whether `name` may have an identity. Without one (a hub that issues no
 * credentials and was given none), AG2's default: scheme `none` only, and `remote_agent` passports unchecked. An
 * identity the operator revoked is refused with the same answer as a wrong admission credential, until re-admitted.
 *
 * A `remote_agent` is registered (and attached) only for an owner the operator allows: its passport must name its
 * `owner`, and the authenticator admits the owner — the admission credential is the owner's (its key in the
 * operator's API keys), not the agent's; any other answer is `RemoteAgentOwnerError`. An owner holds the key to
 * seat external agents, which take their turns through calls the network cannot see into.
 */
export async function admit(
  ctx: Pick<HomeStores, 'registry' | 'authenticator'>,
  name: string,
  passport: Pick<Passport, 'auth' | 'kind'> & { readonly owner?: string },
): Promise<void> {
  const known = ctx.registry.lookup(name);
  if (known?.credentials?.revoked_at != null) throw refusedAdmission(name);
  if (effectiveKind(passport) === 'remote_agent') {
    // An attach names no owner: the registered one's admits it.
    await admitOwner(ctx, { auth: passport.auth, owner: passport.owner ?? known?.passport.owner ?? '' });
    return;
  }
  if (ctx.authenticator !== null) {
    await ctx.authenticator.admit({ name, auth: passport.auth });
    return;
  }
  if (passport.auth.scheme !== 'none') {
    throw new AuthError(`unknown auth scheme: ${repr(passport.auth.scheme)}`);
  }
}

/** Admits a `remote_agent`'s owner (see `admit`); without an authenticator, any named owner (AG2's default). */
async function admitOwner(
  ctx: Pick<HomeStores, 'authenticator'>,
  passport: Pick<Passport, 'auth' | 'owner'>,
): Promise<void> {
  const { owner } = passport;
  if (owner === '') throw new RemoteAgentOwnerError(owner);
  if (ctx.authenticator === null) return;
  try {
    await ctx.authenticator.admit({ name: owner, auth: passport.auth });
  } catch (err) {
    // The authenticator's own failure stays `internal`; only a refusal is the owner's.
    if (err instanceof AuthError) throw new RemoteAgentOwnerError(owner, { cause: err });
    throw err;
  }
}

/** The record of a registration; a retried register publishes it again under the same id, stored once. */
async function auditRegistered(ctx: Pick<HomeStores, 'audit'>, passport: Passport): Promise<void> {
  const id = passport.agent_id ?? '';
  await ctx.audit.recordAfter(
    AuditKind.AgentRegistered,
    { agent_id: id, name: passport.name },
    { id: `agent_registered.${id}`, at: passport.created_at },
  );
}

/** Removes an identity and its inbox; channels and their logs are kept. */
export async function unregister(ctx: UnregisterDeps, agentId: string): Promise<void> {
  await ctx.partition.serial.run(REGISTRY_KEY, async () => {
    const record = await ctx.registry.remove(agentId);
    await removeInbox(ctx.jsm, ctx.names, agentId);
    ctx.inboxes.forget(agentId);
    ctx.rateLimiter.forget(agentId);
    ctx.logger.info({ agent: record.passport.name, agentId }, 'agent unregistered');
    await ctx.audit.recordAfter(
      AuditKind.AgentUnregistered,
      { agent_id: agentId, name: record.passport.name },
      { id: `agent_unregistered.${agentId}` },
    );
  });
}

/** AG2's `get_agent`: by name, then by id. */
export function getAgent(ctx: Pick<HomeStores, 'registry'>, nameOrId: string): Passport {
  const record = ctx.registry.lookup(nameOrId);
  if (record === undefined) throw new NotFoundError(`agent not found: ${nameOrId}`);
  return record.passport;
}

export function getResume(ctx: Pick<HomeStores, 'registry'>, agentId: string): Resume {
  const record = ctx.registry.get(agentId);
  if (record === undefined) throw new NotFoundError(`resume not found: ${agentId}`);
  return record.resume;
}

export function getRule(ctx: Pick<HomeStores, 'registry'>, agentId: string): Rule {
  const record = ctx.registry.get(agentId);
  if (record === undefined) throw new NotFoundError(`rule not found: ${agentId}`);
  return record.rule;
}

/**
 * Replaces the resume: the version goes up by one and `last_updated` is stamped. The `observed` part is the hub's and
 * is kept as it was, whatever the request says.
 */
export async function setResume(ctx: ResumeDeps, agentId: string, resume: Resume): Promise<Resume> {
  return underAgent(ctx, agentId, async () => {
    const old = ctx.registry.require(agentId).resume;
    // `observed` is the hub's record of what the agent did: the tenant's resume never replaces it.
    const next: Resume = {
      ...resume,
      observed: old.observed,
      version: old.version + 1,
      last_updated: isoAt(ctx.clock.now()),
    };
    const stored = await ctx.registry.setResume(agentId, next);
    await ctx.audit.recordAfter(
      AuditKind.ResumeSet,
      { source: ResumeSource.Tenant, agent_id: agentId, version: stored.version },
      { id: `resume_set.${agentId}.${stored.version}`, at: stored.last_updated },
    );
    return stored;
  });
}

/**
 * Replaces the rule; the version goes up by one. It applies from the next decision on. Limits are held under the
 * operator's ceilings (`withinCeilings`: a 0 or anything higher becomes the ceiling), so `setRule({})` can never
 * lift a limit; the stored rule, which the answer returns, is the one the hub enforces.
 */
export async function setRule(
  ctx: Pick<HubEnv, 'limits'> & Pick<HomeStores, 'registry' | 'audit'> & PartitionPick<'serial'>,
  agentId: string,
  rule: Rule,
): Promise<Rule> {
  return underAgent(ctx, agentId, async () => {
    const old = ctx.registry.require(agentId).rule;
    const held = withinCeilings(rule, ctx.limits);
    const stored = await ctx.registry.setRule(agentId, { ...held, version: old.version + 1 });
    await ctx.audit.recordAfter(
      AuditKind.RuleSet,
      { agent_id: agentId, version: stored.version },
      { id: `rule_set.${agentId}.${stored.version}` },
    );
    return stored;
  });
}

/**
 * Holds every loaded rule under the operator's ceilings, in memory (hydrate): a rule stored before the ceilings, or
 * under higher ones, is enforced as if it were set now. KV keeps what was stored until the agent sets its rule again.
 */
export function holdRulesUnderCeilings(ctx: Pick<HubEnv, 'limits'> & Pick<HomeStores, 'registry'>): void {
  for (const record of ctx.registry.all()) record.rule = withinCeilings(record.rule, ctx.limits);
}

/** Replaces the SKILL.md (`null` removes it). */
export async function setSkill(
  ctx: Pick<HomeStores, 'registry' | 'audit'>,
  agentId: string,
  skill: string | null,
): Promise<void> {
  ctx.registry.require(agentId);
  await ctx.registry.setSkill(agentId, skill);
  await ctx.audit.recordAfter(AuditKind.SkillSet, { agent_id: agentId, removed: skill === null });
}

/** Runs `fn` alone for one agent's resume and rule (read, change, write). */
function underAgent<T>(ctx: PartitionPick<'serial'>, agentId: string, fn: () => Promise<T>): Promise<T> {
  return ctx.partition.serial.run(`agent\u0000${agentId}`, fn);
}

/**
 * AG2's `record_observation`, as an agent may call it: only about a task the caller owns that has ended, with the
 * outcome the task ended with (an agent cannot write its own track record). The hub counts a capability-tagged
 * task's outcome itself when the task ends, so this adds one only for a task without `spec.capability`, under the
 * capability the caller names; a task counts once, also across restarts. The latency is the hub's
 * (`completed_at − started_at`), not the caller's.
 */
export async function recordObservation(
  ctx: ObservationDeps,
  callerId: string,
  req: HubRequestParsed<'recordObservation'>,
): Promise<Resume> {
  ctx.registry.require(callerId);
  if (req.task_id === null) {
    throw new InvalidRequestError('recordObservation needs the task_id of an ended task the caller owns');
  }
  const task = ctx.tasks.get(req.task_id);
  if (task === undefined) throw new NotFoundError(`task not found: ${req.task_id}`);
  if (task.owner_id !== callerId) {
    throw new AccessDeniedError(`only the owner may record an observation of task ${repr(task.task_id)}`);
  }
  if (!isTerminalTaskState(task.state)) {
    throw new ProtocolError(`task ${repr(task.task_id)} has not ended (state=${task.state})`);
  }
  if (req.outcome !== task.state) {
    throw new InvalidRequestError(`task ${repr(task.task_id)} ended ${task.state}, not ${req.outcome}`);
  }
  return countObservation(ctx, callerId, {
    capability: req.capability,
    outcome: task.state,
    latency_ms: latencyOf(task.started_at, task.completed_at),
    task_id: task.task_id,
  });
}

/** A task's run time in ms, when it has both ends. */
function latencyOf(startedAt: string | null, completedAt: string | null): number | null {
  if (startedAt === null || completedAt === null) return null;
  const ms = Date.parse(completedAt) - Date.parse(startedAt);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

/**
 * Counts a terminal outcome toward the owner's observed track record for the capability (`n`, and
 * `completed`/`failed`/`expired`; `cancelled` only in `n`; `latency_ms` replaces `p50_latency_ms`). The hub calls
 * it when a capability-tagged task ends. A task id counts once, also across restarts (a KV marker).
 */
export async function countObservation(
  ctx: ObservationDeps,
  ownerId: string,
  req: HubRequestParsed<'recordObservation'>,
): Promise<Resume> {
  ctx.registry.require(ownerId);
  if (!isTerminalTaskState(req.outcome)) return ctx.registry.require(ownerId).resume;
  // Marked before it is counted: a crash in between loses one observation rather than counting one twice.
  if (req.task_id !== null && !(await ctx.tasks.markObserved(req.task_id))) {
    return ctx.registry.require(ownerId).resume;
  }
  return underAgent(ctx, ownerId, async () => {
    const resume = ctx.registry.require(ownerId).resume;
    const next = observed(resume, req, isoAt(ctx.clock.now()));
    const stored = await ctx.registry.setResume(ownerId, next);
    await ctx.audit.recordAfter(
      AuditKind.ResumeSet,
      {
        source: ResumeSource.Observed,
        agent_id: ownerId,
        version: stored.version,
        capability: req.capability,
        outcome: req.outcome,
      },
      { id: `resume_set.${ownerId}.${stored.version}`, at: stored.last_updated },
    );
    return stored;
  });
}

function observed(resume: Resume, req: HubRequestParsed<'recordObservation'>, now: string): Resume {
  const stat = resume.observed[req.capability] ?? { n: 0, completed: 0, failed: 0, expired: 0, p50_latency_ms: null };
  const next = {
    ...stat,
    n: stat.n + 1,
    completed: stat.completed + (req.outcome === TaskState.Completed ? 1 : 0),
    failed: stat.failed + (req.outcome === TaskState.Failed ? 1 : 0),
    expired: stat.expired + (req.outcome === TaskState.Expired ? 1 : 0),
    p50_latency_ms: req.latency_ms ?? stat.p50_latency_ms,
  };
  return {
    ...resume,
    observed: { ...resume.observed, [req.capability]: next },
    version: resume.version + 1,
    last_updated: now,
  };
}
