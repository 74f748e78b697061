import type { AgentClient, AgentClientOptions, HubClient } from '@ag2net/client';
import type { PassportInput, ResumeInput, RuleInput } from '@ag2net/protocol';
import type { Agent } from '../agent.js';
import { modelIdentity } from '../model/identity.js';
import { createDefaultHandler, type DefaultHandlerOptions } from './handler.js';
import { describeTurnFailure, isTransientFailure, turnFailureReporter } from './turn-failure.js';

/**
 * Runs of a hosted agent's turn that keeps failing for a transient reason: 2, fewer than a plain client's 5, because a
 * model built by `createModel` already retries each call within a run (`maxRetries`, 2): a provider that stays down
 * costs 6 calls and about 7 s before the channel is told, and a model that timed out (not retried within a run) gets
 * a second run.
 */
export const DEFAULT_AGENT_TURN_ATTEMPTS = 2;

/** Options of `registerAgent` and `attachAgent`. */
export interface RegisterAgentOptions extends Omit<DefaultHandlerOptions, 'networkTools'> {
  /**
   * The passport; its name defaults to the agent's, its `provider` and `model` to the agent's model's
   * (`modelIdentity`: `scripted`/`scripted` for the scripted model, `openai`/`gpt-4.1-mini`, …).
   */
  readonly passport?: Partial<PassportInput>;
  readonly resume?: ResumeInput;
  /** The agent's SKILL.md. */
  readonly skillMd?: string | null;
  readonly rule?: RuleInput | null;
  /** Give the agent the network tools (AG2's `NetworkPlugin`); default true. */
  readonly attachPlugin?: boolean;
  /** One turn per (agent, channel) across replicas; default true (see `AgentClientOptions`). */
  readonly exclusiveTurns?: boolean;
  /** Lock time of a crashed replica's turn, in ms (see `AgentClientOptions.turnLockTtlMs`). */
  readonly turnLockTtlMs?: number;
  /**
   * Runs of a turn that keeps failing for a transient reason (`isTransientFailure`) before it is reported as
   * `ag2.turn.failed`; default `DEFAULT_AGENT_TURN_ATTEMPTS` (2).
   */
  readonly maxTurnAttempts?: number;
  /** Pause before a failed turn's second run, in ms, doubling after each; default 1 000. */
  readonly turnRetryBackoffMs?: number;
  /**
   * Where the identity's issued credentials are persisted (a `.creds` file, mode 0600) and, by `attachAgent`, reused
   * (see `RegisterOptions.credsPath`). Default: not persisted.
   */
  readonly credsPath?: string;
}

/**
 * Registers `agent` on the hub and starts answering its deliveries with the default handler (and, unless
 * `attachPlugin: false`, the network tools), under the agent runtime's turn-failure policy: a turn that failed for a
 * transient reason runs again, one that failed for good is reported once as `ag2.turn.failed` (`isTransientFailure`,
 * `turnFailureReporter`). Resolves with the agent's client.
 */
export function registerAgent(hub: HubClient, agent: Agent, options: RegisterAgentOptions = {}): Promise<AgentClient> {
  const { passport, ...rest } = options;
  return hub.register(passportOf(agent, passport, passport?.name ?? agent.name), clientOptions(agent, rest));
}

/**
 * Reconnects `agent` to its identity registered earlier (by name) and resumes its inbox; an unknown name is
 * registered (the passport defaults to the agent's name and model). Attaching keeps the passport the hub has: its
 * `provider` and `model` are those of the first registration. Call `resumePendingTurns()` on the result to answer
 * the turns that were due while it was away.
 */
export function attachAgent(hub: HubClient, agent: Agent, options: RegisterAgentOptions = {}): Promise<AgentClient> {
  const name = options.passport?.name ?? agent.name;
  const { passport, ...rest } = options;
  return hub.attach(name, { ...clientOptions(agent, rest), passport: passportOf(agent, passport, name) });
}

/** The passport an agent registers with: the model it answers with, unless `passport` says otherwise. */
function passportOf(agent: Agent, passport: Partial<PassportInput> | undefined, name: string): PassportInput {
  return { ...modelIdentity(agent.model), ...passport, name };
}

function clientOptions(
  agent: Agent,
  options: Omit<RegisterAgentOptions, 'passport'>,
): AgentClientOptions & {
  readonly resume?: ResumeInput;
  readonly skillMd?: string | null;
  readonly rule?: RuleInput | null;
  readonly credsPath?: string;
} {
  const { resume, skillMd, rule, attachPlugin, exclusiveTurns, turnLockTtlMs, credsPath, ...rest } = options;
  const { maxTurnAttempts, turnRetryBackoffMs, ...handler } = rest;
  return {
    ...(credsPath === undefined ? {} : { credsPath }),
    ...(resume === undefined ? {} : { resume }),
    ...(skillMd === undefined ? {} : { skillMd }),
    ...(rule === undefined ? {} : { rule }),
    ...(exclusiveTurns === undefined ? {} : { exclusiveTurns }),
    ...(turnLockTtlMs === undefined ? {} : { turnLockTtlMs }),
    maxTurnAttempts: maxTurnAttempts ?? DEFAULT_AGENT_TURN_ATTEMPTS,
    ...(turnRetryBackoffMs === undefined ? {} : { turnRetryBackoffMs }),
    isTransientFailure,
    // The client's lines of a failed attempt say what ag2.turn.failed would: scrubbed, without the provider's message.
    describeFailure: (err) => {
      const { code, reason, cause } = describeTurnFailure(err);
      return { code, reason, ...(cause === undefined ? {} : { cause }) };
    },
    onTurnFailed: turnFailureReporter(handler.logger === undefined ? {} : { logger: handler.logger }),
    handler: createDefaultHandler(agent, { ...handler, networkTools: attachPlugin ?? true }),
  };
}
