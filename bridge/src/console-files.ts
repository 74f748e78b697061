import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the built console is by default: `bridge/console-dist/`, from `bridge/src/` and `bridge/dist/` alike. */
export const DEFAULT_CONSOLE_DIR = new URL('../console-dist/', import.meta.url);

/** One file of the console, read into memory at startup. */
export interface ConsoleFile {
  readonly body: Buffer;
  readonly contentType: string;
  readonly cacheControl: string;
}

/** What a request for a console path gets: a file, `missing` (404), or `unbuilt` (no console directory: 503). */
export type ConsoleLookup =
  { readonly kind: 'file'; readonly file: ConsoleFile } | { readonly kind: 'missing' | 'unbuilt' };

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

/** The console's security headers: the bundle is served from this origin only and nothing inline runs. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** The text a request for the console gets when it was not built. */
export const CONSOLE_UNBUILT_TEXT =
  'The web console is not built: run `npm run build:console`, then restart the bridge.\n';

/**
 * The built console, indexed once: `/` is `index.html` and `/assets/<name>` each file under `assets/`. A request path
 * is looked up in this map and never joined onto the directory, so no path (`..`, encoded slashes, symlinks added
 * later) reaches a file that was not there at startup.
 */
export class ConsoleFiles {
  readonly #files: ReadonlyMap<string, ConsoleFile> | null;

  private constructor(files: ReadonlyMap<string, ConsoleFile> | null) {
    this.#files = files;
  }

  /** Indexes `dir` (a path or `file:` URL); a directory that does not exist gives a console that answers `unbuilt`. */
  static load(dir: string | URL): ConsoleFiles {
    const root = typeof dir === 'string' ? dir : fileURLToPath(dir);
    const index = join(root, 'index.html');
    if (!existsSync(index)) return new ConsoleFiles(null);
    const files = new Map<string, ConsoleFile>();
    files.set('/', fileOf(index, 'no-cache'));
    const assets = join(root, 'assets');
    if (existsSync(assets) && statSync(assets).isDirectory()) {
      for (const name of readdirSync(assets)) {
        const path = join(assets, name);
        if (!statSync(path).isFile()) continue;
        // Vite names every asset by its content hash: a name never changes meaning, so browsers keep it for good.
        files.set(`/assets/${name}`, fileOf(path, 'public, max-age=31536000, immutable'));
      }
    }
    return new ConsoleFiles(files);
  }

  /** Whether the console was found at startup. */
  get built(): boolean {
    return this.#files !== null;
  }

  /** Whether `pathname` is one the console answers (`/` or under `/assets/`), built or not. */
  static serves(pathname: string): boolean {
    return pathname === '/' || pathname === '/index.html' || pathname.startsWith('/assets/');
  }

  lookup(pathname: string): ConsoleLookup {
    if (this.#files === null) return { kind: 'unbuilt' };
    const file = this.#files.get(pathname === '/index.html' ? '/' : pathname);
    return file === undefined ? { kind: 'missing' } : { kind: 'file', file };
  }

  /** Answers a GET of a console path: the file, 404 for any other path, 503 when the console was not built. */
  serve(pathname: string, res: ServerResponse): void {
    const found = this.lookup(pathname);
    if (found.kind === 'file') {
      res
        .writeHead(200, {
          ...CONSOLE_HEADERS,
          'content-type': found.file.contentType,
          'cache-control': found.file.cacheControl,
          'content-length': String(found.file.body.length),
        })
        .end(found.file.body);
      return;
    }
    const [status, text] = found.kind === 'unbuilt' ? [503, CONSOLE_UNBUILT_TEXT] : [404, 'Not found.\n'];
    res.writeHead(status, { ...CONSOLE_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end(text);
  }
}

function fileOf(path: string, cacheControl: string): ConsoleFile {
  return {
    body: readFileSync(path),
    contentType: CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
    cacheControl,
  };
}
