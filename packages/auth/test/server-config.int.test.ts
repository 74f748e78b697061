/** The `server.conf` that `auth init` writes is a config nats-server (2.9.10 and the current release) accepts as it is. */
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
    // 2.9 ends the line there; newer servers add the file's digest: `is valid (sha256:<hex>)`.
    const valid = `nats-server: configuration file ${auth.path(AuthFile.serverConf)} is valid`;
    expect(check.status).toBe(0);
    expect(check.stderr.trim()).toMatch(new RegExp(`^${escapeRegExp(valid)}( \\(sha256:[0-9a-f]{64}\\))?$`));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
