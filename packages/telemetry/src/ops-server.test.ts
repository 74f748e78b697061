import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpsServer, type OpsServer, type Readiness } from './ops-server.js';

let server: OpsServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function serve(readiness: () => Readiness | Promise<Readiness>): Promise<string> {
  const registry = new Registry();
  new Counter({ name: 'demo_total', help: 'A counter.', registers: [registry] }).inc(3);
  server = await startOpsServer({ port: 0, host: '127.0.0.1', registry, readiness });
  return `http://127.0.0.1:${server.port}`;
}

describe('ops server', () => {
  it('answers liveness, readiness with its reason, and the registry in the Prometheus text format', async () => {
    let ready: Readiness = { ready: false, reason: 'starting' };
    const base = await serve(() => ready);
    const healthz = await fetch(`${base}/healthz`);
    expect([healthz.status, await healthz.text()]).toEqual([200, '{"status":"alive"}']);
    const before = await fetch(`${base}/readyz`);
    expect([before.status, await before.json()]).toEqual([503, { ready: false, reason: 'starting' }]);
    ready = { ready: true, reason: 'serving' };
    const after = await fetch(`${base}/readyz`);
    expect([after.status, await after.json()]).toEqual([200, { ready: true, reason: 'serving' }]);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect((await metrics.text()).split('\n')).toContain('demo_total 3');
  });

  it('counts a readiness check that throws as not ready, and refuses unknown paths and methods', async () => {
    const base = await serve(() => {
      throw new Error('lookup failed');
    });
    const readyz = await fetch(`${base}/readyz`);
    expect([readyz.status, await readyz.json()]).toEqual([
      503,
      { ready: false, reason: 'readiness check failed: lookup failed' },
    ]);
    expect((await fetch(`${base}/other`)).status).toBe(404);
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('stops listening on close, and a second close is harmless', async () => {
    const base = await serve(() => ({ ready: true, reason: 'ok' }));
    const s = server;
    await Promise.all([s?.close(), s?.close()]);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
