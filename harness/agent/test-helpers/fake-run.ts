/**
 * Test-only, for unit tests of the logic above the RFB client (agents, adapters, guards, replays):
 * fake desktops (the in-process RFB server of rfb/test-helpers/fake-desktop.ts, no X server, no
 * browser), temporary output directories and anything else a test starts, all closed or removed
 * after each test, last first. Loads neither playwright-core nor the desktop launcher.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { startFakeDesktop, type FakeDesktop, type FakeDesktopOptions, type FakeInputEvent } from '../../rfb/test-helpers/fake-desktop.ts';

/** What useFakeRuns() gives a test file. */
export interface FakeRuns {
  /** A fake desktop (default 320x240, black), closed after the test. */
  desktop(options?: FakeDesktopOptions): Promise<FakeDesktop>;
  /** A fresh temporary directory, removed after the test. */
  out(prefix?: string): Promise<string>;
  /** Run `fn` after the test (before what was registered earlier). */
  defer(fn: () => unknown): void;
}

/** Register an afterEach that undoes what the test made through the returned helpers. */
export function useFakeRuns(): FakeRuns {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
  });
  return {
    async desktop(options = {}) {
      const d = await startFakeDesktop(options);
      cleanups.push(() => d.close());
      return d;
    },
    async out(prefix = 'vncua-test-') {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return dir;
    },
    defer(fn) {
      cleanups.push(fn);
    },
  };
}

/**
 * The button presses a fake desktop received: pointer events whose mask gained a button, as [x, y, button]
 * (RFB button numbers less one: 0 left, 1 middle, 2 right, 3 wheel up, 4 wheel down, 5 wheel left, 6 wheel right).
 */
export function presses(events: readonly FakeInputEvent[]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  let mask = 0;
  for (const e of events) {
    if (e.kind !== 'pointer') continue;
    for (let b = 0; b < 8; b++) if (e.mask & (1 << b) && !(mask & (1 << b))) out.push([e.x, e.y, b]);
    mask = e.mask;
  }
  return out;
}

/** The keysyms pressed (key down events), in order. */
export function keyDowns(events: readonly FakeInputEvent[]): number[] {
  return events.flatMap((e) => (e.kind === 'key' && e.down ? [e.keysym] : []));
}
