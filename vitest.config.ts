import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Behaviour tests are slow to start (a database per file) but independent: run files in parallel.
    fileParallelism: true,
  },
});
