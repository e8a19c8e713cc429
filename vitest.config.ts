import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real desktops are heavy on a 2-core machine: keep file-level parallelism modest.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
