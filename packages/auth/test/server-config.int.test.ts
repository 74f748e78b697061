/** The `server.conf` that `auth init` writes is a config nats-server 2.9 accepts as it is. */
import { AuthFile, authInit } from '@ag2net/auth';
import { findNatsServer } from '@ag2net/test-support';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('nats-server validates the generated server.conf', async () => {
  const root = await mkdtemp(join(tmpdir(), 'ag2net-auth-conf-'));
  try {
    const auth = await authInit({ dir: join(root, 'auth'), prefix: 'acme', port: 14_222 });
    const check = spawnSync(findNatsServer(), ['-t', '-c', auth.path(AuthFile.serverConf)], { encoding: 'utf8' });
    expect({ status: check.status, stderr: check.stderr.trim() }).toEqual({
      status: 0,
      stderr: `nats-server: configuration file ${auth.path(AuthFile.serverConf)} is valid`,
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
