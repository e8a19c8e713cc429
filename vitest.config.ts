import { defineConfig } from 'vitest/config';

// Two projects (issue 13 point 6):
// - unit: no X server, no VNC server, no Chromium, no QEMU. Files run two at a time. `npm run test:unit`.
// - desktop: `*.desktop.test.ts`, which start real desktops (Xvnc or Xvfb + x11vnc, Chromium, QEMU) or
//   the CLI that does. Real desktops are heavy on a 2-core machine, and input timing (double-click
//   intervals, x11vnc's polling) suffers when two desktop-heavy files share the cores: one file at a time.
// `npm test` runs both, unit first (sequence.groupOrder).
const common = { testTimeout: 60_000, hookTimeout: 60_000 };
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...common,
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: ['node_modules/**', 'dist/**', '**/*.desktop.test.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...common,
          name: 'desktop',
          include: ['**/*.desktop.test.ts'],
          exclude: ['node_modules/**', 'dist/**'],
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
