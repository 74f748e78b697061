import { ModelConfigSchema, ScriptStepSchema } from '@ag2net/agent';
import { formatIssues } from '@ag2net/protocol/internal';
import { Ag2netError, AuthBlockSchema, ErrorCode, PrefixSchema, ResumeSchema, RuleSchema } from '@ag2net/protocol';
import { readFile } from 'node:fs/promises';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { A2aConfigSchema } from './a2a/options.js';

/**
 * `provider: auto` — a real model when the environment names one (OPENAI_API_KEY, ANTHROPIC_API_KEY,
 * AG2NET_LLM_BASE_URL), otherwise the scripted model with `script` (started over when used up, with `loop`). What
 * the offline demo uses.
 */
const AutoModelSchema = z.strictObject({
  provider: z.literal('auto'),
  script: z.array(ScriptStepSchema).default([]),
  loop: z.boolean().default(false),
});

/** Where an agent's extra tools come from: an ES module exporting an AI SDK tool set. */
const ToolsSchema = z.strictObject({
  /** Path of the module, relative to the config file. */
  module: z.string().min(1),
  /** The export holding the tool set; default `tools`. */
  export: z.string().min(1).default('tools'),
});

/** One hosted agent: a language model's (`model`), or a remote A2A agent's (`a2a`), whose turns are its calls. */
export const AgentConfigSchema = z
  .strictObject({
    name: z.string().min(1).max(128),
    instructions: z.string().default(''),
    model: z.union([AutoModelSchema, ModelConfigSchema]).optional(),
    /** A remote A2A agent: registered as a `remote_agent`, each turn one call to its endpoint. */
    a2a: A2aConfigSchema.optional(),
    /** The passport's `owner`; a `remote_agent` is registered only for an owner the hub's operator allows. */
    owner: z.string().min(1).max(128).optional(),
    /** SKILL.md path, relative to the config file. */
    skill: z.string().min(1).optional(),
    resume: ResumeSchema.partial().optional(),
    rule: RuleSchema.optional(),
    tools: ToolsSchema.optional(),
    /** Model calls per turn. */
    max_steps: z.number().int().min(1).max(100).optional(),
    /** How long one model call may take, in ms, before the turn fails with `model_timeout`. */
    timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
    /** Retries of a model call that failed for a transient reason (5xx, 429, unreachable). */
    max_retries: z.number().int().min(0).max(10).optional(),
    /**
     * The passport's admission credential (AG2's `AuthBlock`, e.g. `{ scheme: api_key, claim: { token: … } }`),
     * checked by the hub at registration and attach; default the runner's `--api-key`.
     */
    auth: AuthBlockSchema.optional(),
  })
  .superRefine((agent, ctx) => {
    if ((agent.model === undefined) === (agent.a2a === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['model'], message: 'give either model or a2a' });
    }
    if (agent.a2a !== undefined && agent.owner === undefined) {
      ctx.addIssue({ code: 'custom', path: ['owner'], message: 'an a2a agent needs the owner it is registered for' });
    }
  });
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/** A runner's configuration file (YAML or JSON). */
export const RunnerConfigSchema = z.strictObject({
  /** The hub's prefix; default `ag2` (`AG2NET_PREFIX` overrides). */
  prefix: PrefixSchema.optional(),
  agents: z.array(AgentConfigSchema).min(1, 'declare at least one agent'),
});
export type RunnerConfig = z.infer<typeof RunnerConfigSchema>;

/**
 * The configuration could not be read or is invalid; the message lists every problem with its path. Code
 * `invalid_config`.
 */
export class RunnerConfigError extends Ag2netError {
  override readonly name = 'RunnerConfigError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidConfig, message, options);
  }
}

/** Reads and validates a runner configuration file; relative paths in it resolve against its folder. */
export async function loadRunnerConfig(path: string): Promise<{ config: RunnerConfig; baseDir: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new RunnerConfigError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { config: parseRunnerConfig(text, path), baseDir: dirname(resolve(path)) };
}

/** Parses configuration text (JSON for `.json`, YAML otherwise) and validates it. */
export function parseRunnerConfig(text: string, path: string): RunnerConfig {
  let raw: unknown;
  try {
    raw = extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new RunnerConfigError(
      `${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = RunnerConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new RunnerConfigError(formatIssues(`${path} is invalid`, parsed.error.issues, { layout: 'list' }));
  }
  const names = parsed.data.agents.map((a) => a.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new RunnerConfigError(`${path} is invalid:\n  agents: ${twice} is declared twice`);
  return parsed.data;
}

/** A path from the config file, made absolute. */
export function resolveFrom(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}
