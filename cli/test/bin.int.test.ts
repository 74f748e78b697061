/** `npx ag2net` as a user runs it after `npm ci`: the bin script starts the command in its own process. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/ag2net.js', import.meta.url));

function ag2net(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('the ag2net bin', () => {
  it('prints its help with every command and the exit codes, and exits 0', async () => {
    const r = await ag2net(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: ag2net \[options\] \[command\]/);
    for (const command of ['health', 'agents', 'channels', 'wal', 'tail', 'audit', 'tasks', 'chat', 'auth', 'creds']) {
      expect(r.out).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(r.out).toContain('5  hub unavailable');
  });

  it('exits 2 on a missing argument and 5 when NATS is unreachable, as a process', async () => {
    const usage = await ag2net(['wal']);
    expect([usage.code, usage.err]).toEqual([2, expect.stringContaining("missing required argument 'channel'")]);
    const down = await ag2net(['--server', 'nats://127.0.0.1:1', 'health']);
    expect([down.code, down.err]).toEqual([5, expect.stringContaining('cannot reach NATS')]);
  });
});
