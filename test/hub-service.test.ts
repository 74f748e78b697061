import { authInit, createIdentityKeys } from '@ag2net/auth';
import { HubClient, HubRpc } from '@ag2net/client';
import { hubNames } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { partitionRanges } from '../hub-service/src/holdings.js';
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

  it('with --partitions 8 two hubs each serve a share, log which, and a hub started with another count exits 2', async () => {
    const prefix = uniqueName('parts');
    const partitions = ['--partitions', '8'];
    const one = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'hub-1', extraArgs: [...partitions, '--http-port', '0'] }),
    );
    type Line = { msg?: string; port?: number; partitions?: number[]; epochs?: number[]; of?: number };
    const lines = (service: typeof one): Line[] =>
      service
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    // The second starts once the first has provisioned the prefix.
    await waitFor(() => lines(one).some((l) => l.msg === 'started; competing for its share of the partitions'), {
      timeoutMs: 20_000,
      what: 'the first hub',
    });
    const two = stack.track(startHubService({ natsUrl: stack.url, prefix, hubId: 'hub-2', extraArgs: partitions }));
    /** The partitions a service's last `serving` line names. */
    const serving = (service: typeof one): number[] =>
      lines(service).findLast((l) => l.msg === 'serving' || l.msg === 'serving no partition')?.partitions ?? [];
    // Settled: each its fair share of 4 (while partitions move one at a time, 8 in all can be a passing moment).
    // The second is handed its first partition after two lease times (12 s), the others one by one.
    await waitFor(() => serving(one).length === 4 && serving(two).length === 4, {
      timeoutMs: 45_000,
      what: 'both hubs serving their share of 4 of the 8 partitions',
    });
    expect([...serving(one), ...serving(two)].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const started = lines(two).find((l) => l.msg === 'started; competing for its share of the partitions');
    expect(started).toMatchObject({ partitions: 8 });
    const last = lines(one).findLast((l) => l.msg === 'serving');
    expect(last?.of).toBe(8);
    expect(last?.epochs?.length).toBe(serving(one).length);

    // The roster says the same: every partition held by one hub.
    await using operator = await HubClient.connect({ servers: stack.url, prefix, operator: true });
    const hubs = await operator.hubs();
    expect(hubs.map((h) => [h.hub_id, h.role, h.partitions]).sort()).toEqual([
      ['hub-1', 'active', 8],
      ['hub-2', 'active', 8],
    ]);
    const held = hubs.flatMap((h) => h.held.map((p) => p.partition));
    expect(held.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    // /readyz names what it serves.
    const port = lines(one).find((l) => l.msg === 'serving /healthz, /readyz and /metrics')?.port;
    const ready = await fetch(`http://127.0.0.1:${port ?? 0}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      reason: `active, serving partitions ${partitionRanges(serving(one))} of 8`,
    });

    const other = startHubService({ natsUrl: stack.url, prefix, hubId: 'hub-3', extraArgs: ['--partitions', '4'] });
    stack.track(other);
    expect(await other.exited).toBe(2);
    expect(other.output()).toContain(
      `invalid configuration:\n  --partitions (AG2NET_PARTITIONS): prefix ${prefix} was provisioned with another ` +
        'partition count than 4',
    );
  }, 90_000);

  it('refuses bad configuration with a readable message and exit code 2', async () => {
    const bad = startService('bad', 'hub-service/src/main.ts', ['--prefix', 'has.dot']);
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('--prefix (AG2NET_PREFIX)');
  }, 30_000);

  it('admits a name added to its --api-keys file without a restart, and keeps the keys through a malformed edit', async () => {
    const prefix = uniqueName('keys');
    const root = await mkdtemp(join(tmpdir(), 'ag2net-svc-keys-'));
    try {
      const auth = await authInit({ dir: join(root, 'auth'), prefix, storeDir: join(root, 'jetstream') });
      const keysFile = join(root, 'api-keys.json');
      await writeFile(keysFile, JSON.stringify({ alice: 'k-alice' }), { mode: 0o600 });
      const service = stack.track(
        startHubService({
          natsUrl: stack.url,
          prefix,
          hubId: 'keys',
          extraArgs: ['--auth-dir', auth.dir, '--api-keys', keysFile],
        }),
      );
      const rpc = new HubRpc(stack.nc, { prefix, retryForMs: 20_000 });
      const register = async (name: string, token: string): Promise<string> => {
        const request = {
          passport: { name, auth: { scheme: 'api_key', claim: { token } } },
          public_key: createIdentityKeys().publicKey,
        };
        return rpc.call('register', request).then(
          (r) => r.passport.name,
          (err: unknown) => (err instanceof Error ? err.message : String(err)),
        );
      };
      const logs = () =>
        service
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg?: string; level?: number; keys?: number; file?: string });
      await waitFor(() => logs().some((l) => l.msg === 'serving'), { timeoutMs: 20_000, what: 'the hub serving' });
      expect(await register('newbie', 'k-new')).toBe("admission refused for 'newbie'");

      await writeFile(`${keysFile}.next`, JSON.stringify({ alice: 'k-alice', newbie: 'k-new' }), { mode: 0o600 });
      await rename(`${keysFile}.next`, keysFile);
      await waitFor(() => logs().some((l) => l.msg === 'API keys reloaded'), { what: 'the reload' });
      expect(await register('newbie', 'k-new')).toBe('newbie');

      await writeFile(keysFile, '{ "alice": "k-alice", ');
      await waitFor(() => logs().some((l) => l.level === 40 && l.file === keysFile), { what: 'the warning' });
      expect(await register('alice', 'k-alice')).toBe('alice');
      const reloads = logs().filter((l) => l.file === keysFile && l.msg !== 'issuing identity credentials');
      expect(reloads.map((l) => [l.level, l.msg, l.keys])).toEqual([
        [30, 'API keys reloaded', 2],
        [40, `${keysFile} is not a valid API keys file; keeping the previous keys`, undefined],
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});
