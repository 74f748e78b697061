import { HubRpc } from '@ag2net/client';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { startHubService, startRunner } from './support/processes.js';

/**
 * A runner whose hosted agent can no longer be served (its inbox consumer is gone: the identity was unregistered)
 * exits non-zero, so that a supervisor restarts it, instead of living on without answering.
 */

const CONFIG = 'test/fixtures/e2e/slow-agent.yaml';
const stack = fileStack();

describe('agent-runner', () => {
  it('exits with 1 and says which agent stopped when a hosted agent’s inbox ends by itself', async () => {
    const prefix = uniqueName('runexit');
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
    stack.track(startHubService({ natsUrl: stack.url, prefix, hubId: 'hub' }));
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).role === 'active', {
      timeoutMs: 30_000,
      what: 'the hub',
    });
    const runner = stack.track(startRunner({ natsUrl: stack.url, prefix, configPath: CONFIG, name: 'runner' }));
    await waitFor(() => runner.output().includes('runner ready'), { timeoutMs: 30_000, what: 'the runner ready' });
    const id = await waitFor(async () => (await rpc.call('findAgentId', { name: 'slowpoke' })).agent_id ?? false, {
      timeoutMs: 10_000,
      what: 'slowpoke registered',
    });

    await rpc.call('unregister', {}, { caller: id });

    expect(await runner.exited).toBe(1);
    expect(runner.output()).toContain('agent stopped by itself; exiting');
    expect(runner.output()).toContain('"agent":"slowpoke"');
  });
});
