import { ConsultingAdapter, SAY_TOOL, createDefaultAdapterRegistry } from '@ag2net/adapters';
import { asSchema, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { channelFor } from '../../test/fixtures.js';
import { ChannelWatches } from '../runtime/watches.js';
import type { ToolClient, ToolContext } from './context.js';
import { NETWORK_TOOL_NAMES, adapterTools, networkTools } from './network.js';

// Binding tools does no I/O; nothing here executes one, so the client is never touched.
const ctx: ToolContext = {
  client: {} as ToolClient,
  channel: null,
  depth: 0,
  adapters: createDefaultAdapterRegistry(),
  waiters: new ChannelWatches(),
  tasks: null,
};

describe('network tools', () => {
  it("are AG2's plugin tools, without say", () => {
    expect(Object.keys(networkTools(ctx))).toEqual(['delegate', 'peers', 'channels', 'tasks', 'context']);
    expect(NETWORK_TOOL_NAMES).toEqual(['delegate', 'peers', 'channels', 'tasks', 'context']);
  });

  it("bind the adapter's say with the adapter's own JSON Schema", async () => {
    const adapter = new ConsultingAdapter();
    const specs = adapter.toolsFor(channelFor(adapter, 'alice', ['bob']), null, 'alice');
    const { tools, unbound } = adapterTools(specs, ctx);
    expect([Object.keys(tools), unbound]).toEqual([['say'], []]);
    expect(await asSchema(tools['say']?.inputSchema).jsonSchema).toEqual(SAY_TOOL.parameters);
  });

  it('leave out a description nobody binds, unless a binder knows it', () => {
    const spec = { name: 'vote', description: 'Vote.', parameters: { type: 'object' } };
    expect(adapterTools([spec], ctx).unbound).toEqual(['vote']);
    const vote = tool({ inputSchema: z.object({}), execute: () => 'voted' });
    const bound = adapterTools([spec, SAY_TOOL], ctx, (s) => (s.name === 'vote' ? vote : null));
    expect([Object.keys(bound.tools), bound.unbound]).toEqual([['vote', 'say'], []]);
    expect(bound.tools['vote']).toBe(vote);
  });
});
