import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real desktops (Xvnc or Xvfb + x11vnc, Chromium) are heavy on a 2-core machine, and input timing
    // (double-click intervals, x11vnc's polling) suffers when two desktop-heavy files share the cores:
    // run test files one at a time.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
