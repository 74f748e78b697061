import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web console: bridge/console/ → bridge/console-dist/, served by the bridge at / and /assets/ (console-files.ts).
// Everything is bundled: no CDN, no web fonts, no inline script (the bridge's CSP allows script-src 'self' only).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [preact({ prerender: { enabled: false } })],
  // The console imports the workspace's browser-safe packages (@ag2net/protocol, @ag2net/adapters) from their sources.
  resolve: { conditions: ['@ag2net/source', 'module', 'browser', 'development|production'] },
  build: {
    outDir: fileURLToPath(new URL('../console-dist/', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // Inline assets would be data: URLs in scripts and styles; keep them files under /assets/.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      // zod's sources carry /* @__PURE__ */ notes where Rollup cannot use them; it drops them, which is harmless.
      onLog(level, log, handler) {
        if (log.code !== 'INVALID_ANNOTATION') handler(level, log);
      },
    },
  },
});
