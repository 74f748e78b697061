import type { ToolSpec } from '@ag2net/adapters';
import { jsonSchema, tool, type JSONSchema7, type Tool, type ToolSet } from 'ai';
import type { z } from 'zod';
import { channels } from './channels.js';
import { context } from './context-tool.js';
import type { ToolContext } from './context.js';
import { delegate } from './delegate.js';
import { peers } from './peers.js';
import { say } from './say.js';
import {
  ChannelsArgsSchema,
  ContextArgsSchema,
  DelegateArgsSchema,
  PeersArgsSchema,
  SayArgsSchema,
  TasksArgsSchema,
} from './schemas.js';
import { tasks } from './tasks.js';

/** The tools `NetworkPlugin` gives every networked agent (AG2's identity-level tools). */
export const NETWORK_TOOL_NAMES = ['delegate', 'peers', 'channels', 'tasks', 'context'] as const;

/** Binds an adapter's tool description to its behaviour for one turn; `null` when it does not know the tool. */
export type AdapterToolBinder = (spec: ToolSpec, ctx: ToolContext) => Tool | null;

/** AG2's `NetworkPlugin` tools, acting in `ctx`: `delegate`, `peers`, `channels`, `tasks`, `context`. */
export function networkTools(ctx: ToolContext): ToolSet {
  return {
    delegate: tool({
      description:
        'Open a one-shot consulting channel with a peer, send it a prompt and return its reply text (or an "Error: ..." string).',
      inputSchema: DelegateArgsSchema,
      execute: (args) => delegate(ctx, args),
    }),
    peers: tool({
      description:
        'Discover and describe peers. find: query?, capability?, sort_by?, limit. describe: name (or agent_id) → passport, resume, skill_md.',
      inputSchema: PeersArgsSchema,
      execute: (args) => peers(ctx, args),
    }),
    channels: tool({
      description:
        'Channel lifecycle. list: state. open: type, target, knobs?, intent?, ttl?, message?. info: channel_id. close: channel_id? (default the current channel).',
      inputSchema: ChannelsArgsSchema,
      execute: (args) => channels(ctx, args),
    }),
    tasks: tool({
      description:
        'Task lifecycle. list: scope, state, limit. status: task_id. wait: task_id, timeout, poll_interval. cancel: task_id, reason? (asks the owner to stop).',
      inputSchema: TasksArgsSchema,
      execute: (args) => tasks(ctx, args),
    }),
    context: tool({
      description:
        'Read past content of a channel. search: query, scope, limit (case-insensitive). quote: speaker, recent_n, channel_id?.',
      inputSchema: ContextArgsSchema,
      execute: (args) => context(ctx, args),
    }),
  };
}

/** The built-in binder: `say`. */
export const bindBuiltinAdapterTool: AdapterToolBinder = (spec, ctx) => {
  if (spec.name !== 'say') return null;
  return tool({
    description: spec.description,
    // The adapter's own JSON Schema goes to the model; the arguments are validated against ours.
    inputSchema: jsonSchema<z.output<typeof SayArgsSchema>>(spec.parameters as JSONSchema7, {
      validate: (value) => {
        const parsed = SayArgsSchema.safeParse(value);
        return parsed.success ? { success: true, value: parsed.data } : { success: false, error: parsed.error };
      },
    }),
    execute: (args) => say(ctx, args),
  });
};

/**
 * The AI SDK tools for an adapter's tool descriptions (`toolsFor`): each bound by `bind`, then the built-in
 * binder. Descriptions nobody binds are left out and reported in `unbound`.
 */
export function adapterTools(
  specs: readonly ToolSpec[],
  ctx: ToolContext,
  bind?: AdapterToolBinder,
): { readonly tools: ToolSet; readonly unbound: readonly string[] } {
  const tools: ToolSet = {};
  const unbound: string[] = [];
  for (const spec of specs) {
    const bound = bind?.(spec, ctx) ?? bindBuiltinAdapterTool(spec, ctx);
    if (bound === null) unbound.push(spec.name);
    else tools[spec.name] = bound;
  }
  return { tools, unbound };
}
