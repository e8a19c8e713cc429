/**
 * Cost of `TraceWriter.append` (validate + stringify + atomic rewrite of partial_execution.json)
 * when the trace already holds about 10, 100 and 1000 entries; with and without zod validation,
 * and with `durable: true` (fsync). Usage: `npx tsx bench/trace-write.ts [--dir <parent dir>]`.
 * Each size gets SAMPLES timed appends: fresh writers are pre-filled to N entries, then the appends
 * N .. N + N/10 are timed (so the trace size varies by at most 10% within a size).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { now } from '../harness/trace/clock.ts';
import { entryIssue } from '../harness/trace/parse.ts';
import { sampleEntry } from '../harness/trace/test-fixtures/entries.ts';
import { TraceWriter, type TraceWriterOptions } from '../harness/trace/writer.ts';

const SIZES = [10, 100, 1000];
const SAMPLES = 100;

interface Stats {
  median: number;
  p95: number;
  max: number;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: at(0.5), p95: at(0.95), max: s[s.length - 1]! };
}

async function measureAppend(parent: string, size: number, options: TraceWriterOptions, samples: number): Promise<{ stats: Stats; bytes: number }> {
  const window = Math.max(1, Math.floor(size / 10));
  const times: number[] = [];
  let bytes = 0;
  for (let rep = 0; times.length < samples; rep++) {
    const dir = join(parent, `n${size}-${options.durable ? 'd' : 'f'}${options.validate === false ? 'nv' : 'v'}-${rep}`);
    const w = new TraceWriter(dir, options);
    await w.open();
    for (let i = 0; i < size; i++) await w.append(sampleEntry(i));
    for (let i = size; i < size + window && times.length < samples; i++) {
      const t0 = now();
      await w.append(sampleEntry(i));
      times.push(now() - t0);
    }
    bytes = (await stat(w.paths.partial)).size;
    await w.finalize();
    await rm(dir, { recursive: true, force: true });
  }
  return { stats: stats(times), bytes };
}

function microbench(label: string, fn: (i: number) => unknown): string {
  const n = 20_000;
  for (let i = 0; i < 2000; i++) fn(i); // warm up
  const t0 = now();
  for (let i = 0; i < n; i++) fn(i);
  return `${label}: ${(((now() - t0) / n) * 1000).toFixed(2)} µs/entry`;
}

async function main(): Promise<void> {
  const dirArg = process.argv.indexOf('--dir');
  const parent = await mkdtemp(join(dirArg > 0 ? process.argv[dirArg + 1]! : tmpdir(), 'vncua-bench-trace-'));
  try {
    // warm up the fs and JIT
    await measureAppend(parent, 10, {}, 20);
    const full = sampleEntry(5);
    const entry = { index: 5, ...full, duration_ms: full.ended_at - full.started_at };
    console.log(microbench('zod validation (entryIssue)', () => entryIssue(entry)));
    console.log(microbench('JSON.stringify of one entry', () => JSON.stringify(entry)));
    console.log('');
    console.log('append cost (ms) at trace size N, in', parent);
    console.log('N     | file KB | default (validate)            | validate: false               | durable: true');
    for (const size of SIZES) {
      const def = await measureAppend(parent, size, {}, SAMPLES);
      const nv = await measureAppend(parent, size, { validate: false }, SAMPLES);
      const dur = await measureAppend(parent, size, { durable: true }, Math.min(SAMPLES, 30));
      const fmt = (s: Stats): string => `med ${s.median.toFixed(3)} p95 ${s.p95.toFixed(3)} max ${s.max.toFixed(2)}`.padEnd(29);
      console.log(`${String(size).padEnd(5)} | ${(def.bytes / 1024).toFixed(1).padStart(7)} | ${fmt(def.stats)} | ${fmt(nv.stats)} | ${fmt(dur.stats)}`);
    }
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

await main();
