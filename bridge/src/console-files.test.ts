import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CONSOLE_UNBUILT_TEXT, ConsoleFiles } from './console-files.js';

const root = mkdtempSync(join(tmpdir(), 'ag2net-console-'));
const dist = join(root, 'console-dist');
mkdirSync(join(dist, 'assets'), { recursive: true });
writeFileSync(join(dist, 'index.html'), '<!doctype html><title>console</title>');
writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
writeFileSync(join(dist, 'assets', 'index-def456.css'), 'body{}');
writeFileSync(join(root, 'secret.txt'), 'not served');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fileAt(files: ConsoleFiles, path: string) {
  const found = files.lookup(path);
  if (found.kind !== 'file') throw new Error(`${path}: ${found.kind}`);
  return found.file;
}

describe('ConsoleFiles', () => {
  const files = ConsoleFiles.load(pathToFileURL(`${dist}/`));

  it('serves index.html at / without caching, and hashed assets as immutable, with their content types', () => {
    expect(files.built).toBe(true);
    const index = fileAt(files, '/');
    expect(index.contentType).toBe('text/html; charset=utf-8');
    expect(index.cacheControl).toBe('no-cache');
    expect(index.body.toString()).toBe('<!doctype html><title>console</title>');
    const js = fileAt(files, '/assets/index-abc123.js');
    expect(js.contentType).toBe('text/javascript; charset=utf-8');
    expect(js.cacheControl).toBe('public, max-age=31536000, immutable');
    expect(fileAt(files, '/assets/index-def456.css').contentType).toBe('text/css; charset=utf-8');
  });

  it('answers missing for any path not indexed, traversal included', () => {
    for (const path of [
      '/assets/nope.js',
      '/assets/../index.html',
      '/assets/../../secret.txt',
      '/../secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/',
      '/secret.txt',
    ]) {
      expect(files.lookup(path), path).toEqual({ kind: 'missing' });
    }
  });

  it('a file added after startup is not served', () => {
    writeFileSync(join(dist, 'assets', 'late.js'), 'x');
    expect(files.lookup('/assets/late.js')).toEqual({ kind: 'missing' });
  });

  it('a console directory that does not exist answers unbuilt', () => {
    const none = ConsoleFiles.load(join(root, 'absent'));
    expect(none.built).toBe(false);
    expect(none.lookup('/')).toEqual({ kind: 'unbuilt' });
  });

  it('serves / and /assets/ only', () => {
    expect(ConsoleFiles.serves('/')).toBe(true);
    expect(ConsoleFiles.serves('/assets/x.js')).toBe(true);
    expect(ConsoleFiles.serves('/v1/agents')).toBe(false);
    expect(ConsoleFiles.serves('/healthz')).toBe(false);
  });
});

/** Serves `files` on a free port; resolves with its URL and a closer. */
async function serving(files: ConsoleFiles): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => files.serve(new URL(req.url ?? '/', 'http://x').pathname, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}

describe('ConsoleFiles.serve', () => {
  it('answers with the file and the security headers; 404 off the index; 503 with how to build when unbuilt', async () => {
    const built = await serving(ConsoleFiles.load(dist));
    const unbuilt = await serving(ConsoleFiles.load(join(root, 'absent')));
    try {
      const index = await fetch(`${built.url}/`);
      expect(index.status).toBe(200);
      expect(await index.text()).toBe('<!doctype html><title>console</title>');
      expect(index.headers.get('content-security-policy')).toBe(
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
          "frame-ancestors 'none'; base-uri 'none'",
      );
      expect(index.headers.get('x-content-type-options')).toBe('nosniff');
      expect(index.headers.get('referrer-policy')).toBe('no-referrer');
      expect(index.headers.get('cache-control')).toBe('no-cache');
      const js = await fetch(`${built.url}/assets/index-abc123.js`);
      expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await fetch(`${built.url}/assets/..%2f..%2fsecret.txt`)).status).toBe(404);
      const missing = await fetch(`${unbuilt.url}/`);
      expect(missing.status).toBe(503);
      expect(await missing.text()).toBe(CONSOLE_UNBUILT_TEXT);
    } finally {
      built.server.close();
      unbuilt.server.close();
    }
  });
});
