import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseExecution } from './parse.ts';
import { sampleEntry } from './test-fixtures/entries.ts';
import { mulberry32 } from '../prng.ts';
import { startCrashChild } from '../test-helpers/crash-child.ts';

const CHILD = fileURLToPath(new URL('./test-fixtures/append-loop.ts', import.meta.url));
const KILLS = 24;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-trace-crash-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Starts the append loop in `out`, kills it with SIGKILL once it printed "appended `afterAppends`" (0: once
 * it printed "ready"), then `delayMs` later; returns the highest "appended N" it printed. Waiting for a
 * count, not a time, keeps the traces as large on a loaded machine as on a quiet one.
 */
async function runAndKill(out: string, afterAppends: number, delayMs: number): Promise<number> {
  let signal: NodeJS.Signals | null = null;
  const c = startCrashChild(CHILD, [out], { bundle: true });
  try {
    await c.until((stdout) => stdout.startsWith('ready\n') && (afterAppends === 0 || stdout.includes(`\nappended ${afterAppends}\n`)));
    await new Promise((r) => setTimeout(r, delayMs));
  } finally {
    signal = await c.kill9();
  }
  expect(signal).toBe('SIGKILL');
  const stdout = c.stdout();
  const counts = [...stdout.matchAll(/^appended (\d+)$/gm)].map((m) => Number(m[1]));
  for (const [i, n] of counts.entries()) expect(n).toBe(i + 1);
  return counts.length;
}

it(`partial_execution.json survives kill -9 at ${KILLS} random moments`, async () => {
  const seed = Date.now() >>> 0;
  const rand = mulberry32(seed);
  const found: number[] = [];
  for (let k = 0; k < KILLS; k++) {
    const out = join(dir, `run-${k}`);
    // a third of the kills land almost immediately (first appends), the rest after 1-200 appends (large
    // files; the second kill after 120, so some trace surely grew past 50 entries), each a few ms later
    const afterAppends = k % 3 === 0 ? 0 : k === 1 ? 120 : 1 + Math.floor(rand() * 200);
    const delayMs = Math.floor(rand() * 5);
    const reported = await runAndKill(out, afterAppends, delayMs);
    const ctx = `seed ${seed}, kill ${k}, after ${afterAppends} appends + ${delayMs} ms, reported ${reported}`;

    const text = await readFile(join(out, 'partial_execution.json'), 'utf8');
    let data: unknown;
    expect(() => (data = JSON.parse(text)), ctx).not.toThrow();
    const entries = parseExecution(data, ctx); // consecutive index from 0, every entry valid
    expect(entries.length, ctx).toBeGreaterThanOrEqual(reported);
    entries.forEach((e, i) => {
      const { index, duration_ms, ...rest } = e;
      expect(index, ctx).toBe(i);
      expect(rest, `${ctx}, entry ${i}`).toEqual(sampleEntry(i));
      expect(duration_ms, ctx).toBeCloseTo(sampleEntry(i).ended_at - sampleEntry(i).started_at, 6);
    });
    // writes are serialized: at most the one in-flight temp file is left behind by the kill
    const tmps = (await readdir(out)).filter((f) => f.includes('.tmp-'));
    expect(tmps.length, ctx).toBeLessThanOrEqual(1);
    found.push(entries.length);
  }
  // the test must have killed real, growing traces, not only empty ones
  expect(found.filter((n) => n > 0).length).toBeGreaterThanOrEqual(KILLS / 2);
  expect(Math.max(...found)).toBeGreaterThan(50);
  // 24 children (bundled: plain node starts each in tens of ms; under tsx they took 1-3 s each on a loaded machine).
}, 300_000);
