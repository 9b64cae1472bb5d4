import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // e2e suites spawn servers; two cores, so keep file parallelism modest.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
