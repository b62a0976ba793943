import { availableParallelism } from 'node:os';
import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { E2E, MULTI_PROCESS, UNIT } from './test/projects.js';

// @gatehouse/sdk resolves to its sources (the `source` condition of its exports), as in tsconfig.json: tests
// need no build of packages/sdk and see every edit at once. test/sdk/package-install.test.ts tests the build.
const conditions = { resolve: { conditions: ['source', ...defaultServerConditions] } };

export default defineConfig({
  resolve: { conditions: ['source', ...defaultClientConditions] },
  ssr: conditions,
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // A bound for a hang, never for slowness: no test may fail because the machine is busy. What a test
    // waits for inside it is bounded by test/helpers/patience.ts.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // expect.poll's own default bound (one second) is a fixed limit that a busy machine trips: polls wait
    // as long as test/helpers/patience.ts's PATIENCE_MS.
    expect: { poll: { timeout: 120_000, interval: 50 } },
    // Every core: most files wait on a database or a child process part of the time (vitest's default
    // leaves one core idle, which on 2 cores halves the suite's speed).
    // TEST_WORKERS overrides it: on PostgreSQL a worker waits on the server's process, so CI runs one more there.
    maxWorkers: Number(process.env.TEST_WORKERS) || availableParallelism(),
    // Behaviour tests are slow to start (a database per file) but independent: run files in parallel.
    fileParallelism: true,
    // A worker runs its files one after another in one module graph instead of a fresh process each:
    // loading the app's modules and PGlite per file cost about half the suite's time. Files keep their
    // state in their own app and database, so nothing a file needs depends on what ran before it; a test
    // that changes something process-wide (fake timers) puts it back, and none mocks a module.
    isolate: false,
    // The suite by what a file needs (test/projects.ts says which file is where, and .ci/run which pass runs
    // which project): `npm test` runs them all; `vitest run --project database` one of them.
    projects: [
      // GATEHOUSE_TEST_PROJECT lets test/helpers/app.ts refuse a database to a unit file, so a file that needs one
      // cannot hide among the files each pass runs once.
      { extends: true, test: { name: 'unit', include: UNIT, env: { GATEHOUSE_TEST_PROJECT: 'unit' } } },
      { extends: true, test: { name: 'database', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...E2E, ...MULTI_PROCESS] } },
      { extends: true, test: { name: 'e2e', include: E2E } },
      { extends: true, test: { name: 'multi-process', include: MULTI_PROCESS } },
    ],
  },
});
