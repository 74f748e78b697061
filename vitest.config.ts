import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the `@ag2net/source` export condition,
// so tests never need a build first. Vite's `module` condition is left out: dependencies load as Node loads them,
// not as bundler-only ESM builds Node cannot run (@opentelemetry/api 1.9's has extensionless imports).
const conditions = ['@ag2net/source', ...defaultServerConditions.filter((c) => c !== 'module')];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    // Only with `--coverage` (`npm run test:coverage`): v8 coverage of the shipped sources, summarised into coverage/
    // (gitignored) for scripts/ci/coverage-check.ts, which enforces the branch floors.
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts', 'hub-service/src/**/*.ts', 'agent-runner/src/**/*.ts', 'cli/src/**/*.ts'],
      exclude: ['**/*.test.ts', 'packages/test-support/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      // A failing test still fails the run; the summary is written anyway so the branch floors are reported too.
      reportOnFailure: true,
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
            'hub-service/src/**/*.test.ts',
            'agent-runner/src/**/*.test.ts',
            'bridge/src/**/*.test.ts',
            'bridge/console/src/**/*.test.ts',
            'cli/src/**/*.test.ts',
            'mcp-server/src/**/*.test.ts',
          ],
          exclude: ['**/*.int.test.ts', '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [
            'packages/*/test/**/*.int.test.ts',
            'test/**/*.test.ts',
            'bench/test/**/*.test.ts',
            'cli/test/**/*.test.ts',
          ],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
