import { HubRpc } from '@ag2net/client';
import { hubNames } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { startHubService, startService } from './support/processes.js';

const stack = fileStack();

describe('hub-service process', () => {
  it('on SIGTERM releases the lease, so the standby serves at once instead of after the lease time', async () => {
    const prefix = uniqueName('svc');
    const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 20_000 });
    // A lease of 10 minutes: the standby can only take over this test's time budget if the lease is released.
    const first = startHubService({ natsUrl: stack.url, prefix, hubId: 'first', leaseTtlMs: 600_000 });
    stack.track(first);
    await waitFor(async () => (await rpc.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 20_000,
      what: 'the first hub',
    });
    const second = startHubService({ natsUrl: stack.url, prefix, hubId: 'second', leaseTtlMs: 600_000 });
    stack.track(second);
    await waitFor(() => second.output().includes('started; competing for the lease'), {
      timeoutMs: 20_000,
      what: 'the standby',
    });

    expect(await first.stop('SIGTERM')).toBe(0);
    const logs = first
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; level?: number });
    expect(logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['connected to NATS', 'serving', 'stopped']));

    const health = await rpc.call('health', {}, { timeout: 1000 });
    expect(health).toMatchObject({ hub_id: 'second', role: 'active' });
    const lease = await (await new Kvm(stack.nc).open(hubNames(prefix).leasesBucket)).get('active');
    expect(lease?.string()).toBe('second');
  }, 60_000);

  it('refuses bad configuration with a readable message and exit code 2', async () => {
    const bad = startService('bad', 'hub-service/src/main.ts', ['--prefix', 'has.dot']);
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('--prefix (AG2NET_PREFIX)');
  }, 30_000);
});
