import { Agent, attachAgent, createModel, modelConfigFromEnv, type ModelConfigInput } from '@ag2net/agent';
import type { AgentClient, HubClient } from '@ag2net/client';
import type { ToolSet } from 'ai';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { resolveFrom, RunnerConfigError, type AgentConfig } from './config.js';

/** The model an agent's configuration asks for; `auto` resolves against the environment. */
export function modelConfigOf(
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
): { model: ModelConfigInput; source: string } {
  if (config.model.provider !== 'auto') return { model: config.model, source: config.model.provider };
  const fromEnv = modelConfigFromEnv(env);
  if (fromEnv !== null) return { model: fromEnv, source: `${fromEnv.provider} (from the environment)` };
  return { model: { provider: 'scripted', script: config.model.script }, source: 'scripted (offline)' };
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

/** Builds the agent of a configuration entry and puts it on the network (registering it, or attaching a replica). */
export async function hostAgent(
  hub: HubClient,
  config: AgentConfig,
  baseDir: string,
  env: NodeJS.ProcessEnv,
  turnLockTtlMs?: number,
): Promise<{ client: AgentClient; modelSource: string }> {
  const { model, source } = modelConfigOf(config, env);
  const agent = new Agent({
    name: config.name,
    instructions: config.instructions,
    model: createModel(model, {
      ...(config.timeout_ms === undefined ? {} : { timeoutMs: config.timeout_ms }),
      ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
    }),
    tools: await loadTools(config, baseDir),
    ...(config.max_steps === undefined ? {} : { maxSteps: config.max_steps }),
  });
  const skillMd = config.skill === undefined ? undefined : await readSkill(config, resolveFrom(baseDir, config.skill));
  const client = await attachAgent(hub, agent, {
    ...(config.resume === undefined ? {} : { resume: config.resume }),
    ...(skillMd === undefined ? {} : { skillMd }),
    ...(config.rule === undefined ? {} : { rule: config.rule }),
    ...(turnLockTtlMs === undefined ? {} : { turnLockTtlMs }),
  });
  return { client, modelSource: source };
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
