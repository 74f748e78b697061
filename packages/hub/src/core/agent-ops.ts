import {
  AuthError,
  NotFoundError,
  ProtocolError,
  TaskState,
  defaultRule,
  effectiveKind,
  isTerminalTaskState,
  repr,
  type HubRequestParsed,
  type Passport,
  type Resume,
  type Rule,
} from '@ag2net/protocol';
import { isoAt } from '../clock.js';
import { ensureInboxConsumer, removeInbox } from '../nats/provision.js';
import type { HubContext } from './context.js';

const REGISTRY_KEY = '\u0000registry';

/**
 * Registers an identity (AG2's `register_identity`): checks the auth scheme, refuses a taken name, stamps the id
 * and registration time, stores passport, resume, rule and skill, and creates the agent's durable inbox. A
 * passport that carries the `agent_id` the name is already registered under is a retry and gets the same passport.
 */
export async function register(ctx: HubContext, req: HubRequestParsed<'register'>): Promise<Passport> {
  const { passport } = req;
  if (effectiveKind(passport) !== 'remote_agent' && passport.auth.scheme !== 'none') {
    throw new AuthError(`unknown auth scheme: ${repr(passport.auth.scheme)}`);
  }
  return ctx.serial.run(REGISTRY_KEY, async () => {
    const existingId = ctx.registry.idForName(passport.name);
    if (existingId !== null && existingId === passport.agent_id) return ctx.registry.require(existingId).passport;
    if (passport.agent_id !== null && existingId === null && ctx.registry.get(passport.agent_id) !== undefined) {
      throw new ProtocolError(`agent_id ${repr(passport.agent_id)} is already registered under another name`);
    }
    const nowMs = ctx.clock.now();
    const stamped: Passport = { ...passport, agent_id: passport.agent_id ?? ctx.ids(nowMs), created_at: isoAt(nowMs) };
    const record = await ctx.registry.add({
      passport: stamped,
      resume: req.resume,
      rule: req.rule ?? defaultRule(),
      skill: req.skill_md,
    });
    await ensureInboxConsumer(ctx.jsm, ctx.names, stamped.agent_id ?? '');
    ctx.logger.info({ agentId: stamped.agent_id, name: stamped.name }, 'agent registered');
    return record.passport;
  });
}

/** Removes an identity and its inbox; channels and their logs are kept. */
export async function unregister(ctx: HubContext, agentId: string): Promise<void> {
  await ctx.serial.run(REGISTRY_KEY, async () => {
    const record = await ctx.registry.remove(agentId);
    await removeInbox(ctx.jsm, ctx.names, agentId);
    ctx.logger.info({ agentId, name: record.passport.name }, 'agent unregistered');
  });
}

/** AG2's `get_agent`: by name, then by id. */
export function getAgent(ctx: HubContext, nameOrId: string): Passport {
  const record = ctx.registry.lookup(nameOrId);
  if (record === undefined) throw new NotFoundError(`agent not found: ${nameOrId}`);
  return record.passport;
}

export function getResume(ctx: HubContext, agentId: string): Resume {
  const record = ctx.registry.get(agentId);
  if (record === undefined) throw new NotFoundError(`resume not found: ${agentId}`);
  return record.resume;
}

export function getRule(ctx: HubContext, agentId: string): Rule {
  const record = ctx.registry.get(agentId);
  if (record === undefined) throw new NotFoundError(`rule not found: ${agentId}`);
  return record.rule;
}

/** Replaces the resume: the version goes up by one and `last_updated` is stamped. */
export async function setResume(ctx: HubContext, agentId: string, resume: Resume): Promise<Resume> {
  const old = ctx.registry.require(agentId).resume;
  const next: Resume = { ...resume, version: old.version + 1, last_updated: isoAt(ctx.clock.now()) };
  return ctx.registry.setResume(agentId, next);
}

/** Replaces the rule; the version goes up by one. It applies to the next admission. */
export async function setRule(ctx: HubContext, agentId: string, rule: Rule): Promise<Rule> {
  const old = ctx.registry.require(agentId).rule;
  return ctx.registry.setRule(agentId, { ...rule, version: old.version + 1 });
}

/**
 * AG2's `record_observation`: a terminal outcome of a task counts toward the owner's observed track record for the
 * capability (`n`, and `completed`/`failed`/`expired`; `cancelled` only in `n`). A task id counts once.
 */
export async function recordObservation(
  ctx: HubContext,
  ownerId: string,
  req: HubRequestParsed<'recordObservation'>,
): Promise<Resume> {
  const resume = ctx.registry.require(ownerId).resume;
  if (!isTerminalTaskState(req.outcome)) return resume;
  if (req.task_id !== null) {
    if (ctx.observedTasks.has(req.task_id)) return resume;
    ctx.observedTasks.add(req.task_id);
  }
  const stat = resume.observed[req.capability] ?? { n: 0, completed: 0, failed: 0, expired: 0, p50_latency_ms: null };
  const next = {
    ...stat,
    n: stat.n + 1,
    completed: stat.completed + (req.outcome === TaskState.Completed ? 1 : 0),
    failed: stat.failed + (req.outcome === TaskState.Failed ? 1 : 0),
    expired: stat.expired + (req.outcome === TaskState.Expired ? 1 : 0),
    p50_latency_ms: req.latency_ms ?? stat.p50_latency_ms,
  };
  return ctx.registry.setResume(ownerId, {
    ...resume,
    observed: { ...resume.observed, [req.capability]: next },
    version: resume.version + 1,
    last_updated: isoAt(ctx.clock.now()),
  });
}
