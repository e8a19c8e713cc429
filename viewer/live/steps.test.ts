import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleEntry } from '../../harness/trace/test-fixtures/entries.ts';
import { TraceWriter } from '../../harness/trace/writer.ts';
import { StepsWatch, type StepsEvent } from './steps.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'vncua-live-steps-'));
  cleanup.push(() => rm(d, { recursive: true, force: true }));
  return d;
}
const until = async (cond: () => boolean, what: string, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** Listen to a StepsWatch, keeping every event and the entries by index. */
function listen(w: StepsWatch) {
  const events: StepsEvent[] = [];
  const byIndex = new Map<number, unknown>();
  const stop = w.subscribe((e) => {
    events.push(e);
    if (e.type === 'steps') for (const x of e.entries) byIndex.set(x.index, x);
  });
  cleanup.push(stop);
  return { events, byIndex };
}

describe('StepsWatch (a real TraceWriter writing partial_execution.json)', () => {
  it('tells each listener the entries as they are appended, a late success mark as a changed entry, nothing for finalize', async () => {
    const dir = await tmp();
    // A long poll: what arrives comes from the directory watch.
    const w = new StepsWatch(dir, { pollMs: 60_000 });
    const a = listen(w);
    const writer = new TraceWriter(dir);
    await writer.open();
    for (let i = 0; i < 5; i++) {
      await writer.append(sampleEntry(i));
      await until(() => a.byIndex.size === i + 1, `entry ${i}`);
    }
    expect(a.events.every((e) => e.type === 'steps' && e.entries.length >= 1)).toBe(true);
    // A second listener gets everything so far at once, then only changes.
    const b = listen(w);
    expect(b.events).toEqual([{ type: 'steps', entries: w.current.slice() }]);
    expect(b.byIndex.size).toBe(5);
    const check = { phase: 'grace' as const, rule: 'text' as const, pattern: 'ok', snippet: 'ok', url: 'http://x/', at: 1_763_780_000_500 };
    await writer.markComplete(0, check);
    await until(() => (b.byIndex.get(0) as { success_check?: unknown }).success_check !== undefined, 'the mark on entry 0');
    const last = b.events.at(-1) as Extract<StepsEvent, { type: 'steps' }>;
    expect(last.entries.map((e) => e.index)).toEqual([0]);
    expect(last.entries[0]).toMatchObject({ task_marked_complete: true, success_check: check });
    const n = b.events.length;
    await writer.finalize();
    await w.refresh();
    expect(b.events.length).toBe(n);
    expect(w.current).toHaveLength(5);
  });

  it('a trace that cannot be read is told once (with its code) until it reads again; no trace yet is no error', async () => {
    const dir = await tmp();
    const w = new StepsWatch(dir, { pollMs: 50 });
    const a = listen(w);
    await w.refresh();
    expect(a.events).toEqual([]);
    await writeFile(join(dir, 'partial_execution.json'), '[{"index": 0, "action": 42}]');
    await until(() => a.events.length === 1, 'the trace error');
    expect(a.events[0]).toMatchObject({ type: 'trace-error', code: 'TRACE_ERR_INVALID' });
    await w.refresh();
    await w.refresh();
    expect(a.events).toHaveLength(1);
    const writer = new TraceWriter(dir, { overwrite: true });
    await writer.open();
    await writer.append(sampleEntry(1));
    await until(() => a.byIndex.size === 1, 'the entry once the trace reads');
  });

  it('stops watching when the last listener leaves', async () => {
    const dir = await tmp();
    const w = new StepsWatch(dir, { pollMs: 30 });
    const seen: StepsEvent[] = [];
    const stop = w.subscribe((e) => seen.push(e));
    const writer = new TraceWriter(dir);
    await writer.open();
    await writer.append(sampleEntry(0));
    await until(() => seen.length === 1, 'the first entry');
    expect(w.watching).toBe(true);
    stop();
    expect(w.watching).toBe(false);
    await writer.append(sampleEntry(1));
    await w.refresh(); // read again: the listener that left hears nothing
    expect(seen).toHaveLength(1);
    expect(w.current).toHaveLength(2);
  });
});
