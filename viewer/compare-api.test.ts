import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { T, writeVncuaRun } from '../recorder/process/test-helpers/runs.ts';
import { screenOf } from './compare-api.ts';
import { startViewerServer, type ViewerServer } from './server.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/**
 * Three runs of task t1 (replay; scripted with one extra mouse_move before its type_text; replay's
 * second attempt) and one run of another task.
 */
async function root(): Promise<string> {
  const r = await mkdtemp(join(tmpdir(), 'vncua-viewer-compare-'));
  cleanup.push(() => rm(r, { recursive: true, force: true }));
  await writeVncuaRun(join(r, 'replay', '64_48', 't1'));
  const scripted = await writeVncuaRun(join(r, 'scripted', '64_48', 't1'));
  const exec = join(scripted, 'execution.json');
  const entries = JSON.parse(await readFile(exec, 'utf8')) as Array<Record<string, unknown>>;
  const extra = { ...entries[0]!, action: 'mouse_move', params: { position: { x: 30, y: 20 } }, started_at: T + 500, ended_at: T + 501, duration_ms: 1 };
  entries.splice(1, 0, extra);
  for (const [i, e] of entries.entries()) e.index = i;
  await writeFile(exec, JSON.stringify(entries));
  const other = await writeVncuaRun(join(r, 'replay', '64_48', 'other'));
  await writeFile(join(other, 'task.json'), JSON.stringify({ id: 'other', goal: 'Something else' }));
  return r;
}

async function serve(r: string): Promise<ViewerServer> {
  const s = await startViewerServer({ root: r });
  cleanup.push(() => s.close());
  return s;
}

interface Answer {
  code?: string;
  message?: string;
  a: { dir: string; entries: unknown[]; recording: { start: number } };
  b: { dir: string; entries: unknown[] };
  rows: Array<{ a: number | null; b: number | null; kind: string }>;
  counts: Record<string, number>;
}

describe('api/compare and api/related (a real server on 127.0.0.1)', () => {
  it('aligns the steps of two runs of one task: the extra step is a gap, the others stay paired', async () => {
    const s = await serve(await root());
    const res = await fetch(`${s.url}api/compare?a=${encodeURIComponent('replay/64_48/t1')}&b=${encodeURIComponent('scripted/64_48/t1')}`);
    expect(res.status).toBe(200);
    const c = (await res.json()) as Answer;
    expect([c.a.dir, c.b.dir]).toEqual(['replay/64_48/t1', 'scripted/64_48/t1']);
    expect([c.a.entries.length, c.b.entries.length]).toEqual([4, 5]);
    expect(c.a.recording.start).toBeLessThanOrEqual(T + 10);
    expect(c.rows.map((r) => `${r.a ?? '-'}:${r.b ?? '-'} ${r.kind}`)).toEqual(['0:0 same', '-:1 only_b', '1:2 same', '2:3 same', '3:4 same']);
    expect(c.counts).toEqual({ same: 4, similar: 0, different: 0, only_a: 0, only_b: 1 });
    // Swapped sides: the gap is on the other side.
    const back = (await (await fetch(`${s.url}api/compare?a=${encodeURIComponent('scripted/64_48/t1')}&b=${encodeURIComponent('replay/64_48/t1')}`)).json()) as Answer;
    expect(back.rows[1]).toEqual({ a: 1, b: null, kind: 'only_a' });
  });

  it('refuses runs of different tasks, a missing side and an unknown run, each with its code', async () => {
    const s = await serve(await root());
    const mismatch = await fetch(`${s.url}api/compare?a=${encodeURIComponent('replay/64_48/t1')}&b=${encodeURIComponent('replay/64_48/other')}`);
    expect(mismatch.status).toBe(400);
    const m = (await mismatch.json()) as Answer;
    expect(m.code).toBe('SERVE_ERR_COMPARE_MISMATCH');
    expect(m.message).toContain('"t1"');
    expect(m.message).toContain('"other"');
    const missing = await fetch(`${s.url}api/compare?a=${encodeURIComponent('replay/64_48/t1')}`);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Answer).code).toBe('SERVE_ERR_BAD_REQUEST');
    const unknown = await fetch(`${s.url}api/compare?a=${encodeURIComponent('replay/64_48/t1')}&b=nope`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Answer).code).toBe('SERVE_ERR_RUN_NOT_FOUND');
  });

  it('lists the other runs of a run task, the same suite first; none for a task run once', async () => {
    const s = await serve(await root());
    const rel = (await (await fetch(`${s.url}api/related?dir=${encodeURIComponent('replay/64_48/t1')}`)).json()) as { task_id: string; runs: Array<{ dir: string }> };
    expect(rel.task_id).toBe('t1');
    expect(rel.runs.map((r) => r.dir)).toEqual(['scripted/64_48/t1']);
    const none = (await (await fetch(`${s.url}api/related?dir=${encodeURIComponent('replay/64_48/other')}`)).json()) as { runs: unknown[] };
    expect(none.runs).toEqual([]);
    expect((await fetch(`${s.url}api/related?dir=nope`)).status).toBe(404);
  });

  it('screenOf reads WxH resolutions', () => {
    expect(screenOf('1280x800')).toEqual({ width: 1280, height: 800 });
    expect(screenOf('unknown')).toBeNull();
    expect(screenOf(undefined)).toBeNull();
  });
});
