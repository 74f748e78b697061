import {
  Agent,
  attachAgent,
  createModel,
  modelConfigFromEnv,
  modelIdentity,
  type ModelConfigInput,
  type ModelLimits,
  type TurnObserver,
} from '@ag2net/agent';
import type { AgentClient, HubClient } from '@ag2net/client';
import type { AuthBlock, Passport } from '@ag2net/protocol';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { ToolSet } from 'ai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Cancellations } from './a2a/cancellations.js';
import { remoteAgentModel } from './a2a/host-remote.js';
import { resolveFrom, RunnerConfigError, type AgentConfig } from './config.js';

/** The model an agent's configuration asks for; `auto` resolves against the environment. */
export function modelConfigOf(
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
): { model: ModelConfigInput; source: string } {
  const { model } = config;
  if (model === undefined) throw new RunnerConfigError(`agent ${config.name}: has no model`);
  if (model.provider !== 'auto') return { model, source: model.provider };
  const fromEnv = modelConfigFromEnv(env);
  if (fromEnv !== null) return { model: fromEnv, source: `${fromEnv.provider} (from the environment)` };
  return {
    model: { provider: 'scripted', script: model.script, loop: model.loop },
    source: 'scripted (offline)',
  };
}

/** The model that answers for an agent: its language model, or its remote A2A agent; and where it came from. */
async function agentModel(
  config: AgentConfig,
  options: HostOptions,
): Promise<{ model: LanguageModelV3; source: string }> {
  if (config.a2a !== undefined) {
    return { model: await remoteAgentModel(config.name, config.a2a, options), source: 'a2a' };
  }
  const { model, source } = modelConfigOf(config, options.env);
  return { model: createModel(model, modelLimitsOf(config, options.modelTimeoutMs)), source };
}

/** Loads an agent's extra tools from its module. */
async function loadTools(config: AgentConfig, baseDir: string): Promise<ToolSet> {
  if (config.tools === undefined) return {};
  const path = resolveFrom(baseDir, config.tools.module);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (err) {
    throw new RunnerConfigError(
      `agent ${config.name}: cannot load tools from ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const tools = module[config.tools.export];
  if (typeof tools !== 'object' || tools === null) {
    throw new RunnerConfigError(
      `agent ${config.name}: ${path} has no export '${config.tools.export}' holding a tool set`,
    );
  }
  return tools as ToolSet;
}

/** Options of `hostAgent`. */
export interface HostOptions {
  /** The config file's folder: relative paths in it resolve against it. */
  readonly baseDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** The runner's `--turn-lock-ttl-ms`. */
  readonly turnLockTtlMs?: number;
  /** The runner's `--creds-dir`: the agent's credentials are kept there as `<name>.creds`. */
  readonly credsDir?: string;
  /** The runner's `--api-key`: the admission credential of an agent whose config has no `auth` block. */
  readonly apiKey?: string;
  /** The runner's `--api-keys` file: API keys by agent name, used before `apiKey`. */
  readonly apiKeys?: Readonly<Record<string, string>>;
  /** Told how every turn ended (the runner's metrics). */
  readonly observer?: TurnObserver;
  /** The runner's `--model-timeout-ms`: the timeout of an agent whose config has no `timeout_ms`. */
  readonly modelTimeoutMs?: number;
  /** Told each task a remote A2A agent starts for a turn (the runner logs it at debug). */
  readonly onTask?: (agent: string, taskId: string) => void;
  /** Told when a remote A2A agent's task could not be cancelled (the runner logs it). */
  readonly onCancelFailed?: (agent: string, err: unknown) => void;
  /** Where remote A2A agents' `CancelTask` requests go, for the runner to wait for them before it exits. */
  readonly cancellations?: Cancellations;
}

/** A hosted agent, and which model answers for it. */
export interface HostedAgent {
  readonly client: AgentClient;
  /** Where the model came from, for the log: `openai`, `openai-compatible (from the environment)`, `scripted (offline)`. */
  readonly modelSource: string;
  /** The model as the passport names it (`provider`, `model`): what the agent registers with. */
  readonly model: { readonly provider: string; readonly model: string };
  /**
   * `provider` and `model` of the passport the hub has, when they are not `model`'s: the agent was registered by an
   * earlier run with another model (attaching keeps the registered passport). `null` when they agree.
   */
  readonly registeredAs: { readonly provider: string | null; readonly model: string | null } | null;
}

/** Where an agent's credentials are kept in `credsDir`: its name, made safe as a file name. */
export function credsPathFor(credsDir: string, name: string): string {
  return join(credsDir, `${encodeURIComponent(name)}.creds`);
}

/** The admission credential of an agent: its config's `auth` block, else the runner's API key, else none. */
export function authOf(config: AgentConfig, apiKey: string | undefined): AuthBlock | undefined {
  if (config.auth !== undefined) return config.auth;
  if (apiKey === undefined) return undefined;
  return { scheme: 'api_key', issuer: null, audience: null, key_fingerprint: null, claim: { token: apiKey } };
}

/**
 * The runner's API key for an agent without an `auth` block: for an `a2a` agent its owner's key in `--api-keys` (the
 * hub admits a remote agent under its owner), else the key of the agent's name, else `--api-key`.
 */
export function admissionKeyOf(
  config: AgentConfig,
  options: Pick<HostOptions, 'apiKey' | 'apiKeys'>,
): string | undefined {
  const owners = config.a2a === undefined || config.owner === undefined ? undefined : options.apiKeys?.[config.owner];
  return owners ?? options.apiKeys?.[config.name] ?? options.apiKey;
}

/** Builds the agent of a configuration entry and puts it on the network (registering it, or attaching a replica). */
export async function hostAgent(hub: HubClient, config: AgentConfig, options: HostOptions): Promise<HostedAgent> {
  const { model, source } = await agentModel(config, options);
  const agent = new Agent({
    name: config.name,
    instructions: config.instructions,
    model,
    tools: await loadTools(config, options.baseDir),
    ...(config.max_steps === undefined ? {} : { maxSteps: config.max_steps }),
  });
  const skillMd =
    config.skill === undefined ? undefined : await readSkill(config, resolveFrom(options.baseDir, config.skill));
  const auth = authOf(config, admissionKeyOf(config, options));
  const passport = {
    ...(auth === undefined ? {} : { auth }),
    ...(config.owner === undefined ? {} : { owner: config.owner }),
    ...(config.a2a === undefined ? {} : { kind: 'remote_agent' as const }),
  };
  const client = await attachAgent(hub, agent, {
    passport,
    ...(config.resume === undefined ? {} : { resume: config.resume }),
    ...(skillMd === undefined ? {} : { skillMd }),
    ...(config.rule === undefined ? {} : { rule: config.rule }),
    ...(options.turnLockTtlMs === undefined ? {} : { turnLockTtlMs: options.turnLockTtlMs }),
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    ...(options.credsDir === undefined ? {} : { credsPath: credsPathFor(options.credsDir, config.name) }),
  });
  // The passport names the model the agent answers with (registerAgent fills it in from the model).
  const identity = modelIdentity(agent.model);
  return { client, modelSource: source, model: identity, registeredAs: registeredAs(client.passport, identity) };
}

/** The limits of an agent's model calls: its own `timeout_ms`, else the runner's `--model-timeout-ms`. */
export function modelLimitsOf(config: AgentConfig, modelTimeoutMs: number | undefined): ModelLimits {
  const timeoutMs = config.timeout_ms ?? modelTimeoutMs;
  return {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
  };
}

/** The registered passport's `provider` and `model` when they are not `hosted`'s, else `null`. */
export function registeredAs(
  passport: Pick<Passport, 'provider' | 'model'>,
  hosted: { readonly provider: string; readonly model: string },
): { provider: string | null; model: string | null } | null {
  const agrees = passport.provider === hosted.provider && passport.model === hosted.model;
  return agrees ? null : { provider: passport.provider, model: passport.model };
}

async function readSkill(config: AgentConfig, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new RunnerConfigError(
      `agent ${config.name}: cannot read skill ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
