/**
 * `vncua export-trace --format uitask` (called through its run(), as cli/main.ts does): a trace the
 * real TraceWriter wrote, exported in uitask's exact shape and read back; the default path beside the
 * trace; refusals (existing output, the run's own trace, bad arguments, a trace that is neither
 * vncua's nor uitask's, a middle click) are one coded line, exit 2, nothing written.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { runCaptured } from './test-helpers/capture.ts';
import { readTrace } from '../harness/trace/reader.ts';
import type { TraceEntryInput } from '../harness/trace/schema.ts';
import { sampleEntry } from '../harness/trace/test-fixtures/entries.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskKeys, uitaskScroll, uitaskWait } from '../harness/trace/test-fixtures/uitask.ts';
import { TraceWriter } from '../harness/trace/writer.ts';
import { parseExportTraceArgs, run } from './export-trace.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'vncua-export-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Run the command, capturing what it prints. */
const cli = (argv: string[]) => runCaptured(run, argv);

/** A run directory whose trace the real TraceWriter wrote. */
async function vncuaRun(name: string, entries: TraceEntryInput[], finalize = true): Promise<string> {
  const w = new TraceWriter(join(root, name));
  await w.open();
  for (const e of entries) await w.append(e);
  if (finalize) await w.finalize();
  return w.outputDir;
}

const T = 1_763_780_000_000;
const at = (i: number) => ({ started_at: T + i * 10, ended_at: T + i * 10 + 3 });

describe('vncua export-trace', () => {
  it('writes our trace as uitask writes execution.json, beside the trace, and it reads back the same', async () => {
    const dir = await vncuaRun('run', [
      {
        ...at(0),
        action: 'mouse_click',
        params: { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' },
        task_marked_complete: false,
        meta: { model: { latency_ms: 3 } },
      },
      { ...at(1), action: 'press_keys', params: { keys: 'ctrl+a' }, task_marked_complete: false },
      { ...at(2), action: 'mouse_scroll', params: { position: { x: 10, y: 20 }, direction: 'down', repeat: 3 }, task_marked_complete: null },
      { ...at(3), action: 'wait', params: { seconds: -1 }, task_marked_complete: false, error: { code: 'ACTION_ERR_BAD_ARGUMENT', message: 'wait: seconds must be >= 0' } },
      { ...at(4), action: 'finish', params: {}, task_marked_complete: true },
    ]);
    const r = await cli(['--format', 'uitask', dir]);
    expect(r.code).toBe(0);
    const out = join(dir, 'uitask_execution.json');
    expect(r.out).toBe(
      `wrote ${out}: 5 entries in uitask's execution.json shape (from execution.json, vncua); 1 failed attempt written without its error, as uitask records one\n`,
    );
    // Exactly the bytes uitask's json.dump writes for the same calls.
    expect(await readFile(out, 'utf8')).toBe(
      uitaskExecutionJson([
        uitaskClick({ x: 640, y: 400 }),
        uitaskKeys(['ctrl+a']),
        uitaskScroll({ x: 10, y: 20 }, 'down', 3, { done: null }),
        uitaskWait(-1),
        uitaskFinish(null, { done: true }),
      ]),
    );
    // Read back as uitask's: the same actions, params and task_marked_complete.
    const uitaskDir = join(root, 'as-uitask');
    await mkdir(uitaskDir);
    await writeFile(join(uitaskDir, 'execution.json'), await readFile(out));
    const [ours, back] = [await readTrace(dir), await readTrace(uitaskDir)];
    expect(back.source).toBe('uitask');
    const strip = (e: { action: string; params: unknown; task_marked_complete: unknown }) => [e.action, e.params, e.task_marked_complete];
    expect(back.entries.map(strip)).toEqual(ours.entries.map(strip));
    // The run's own files are untouched.
    expect((await readdir(dir)).sort()).toEqual(['execution.json', 'uitask_execution.json']);
  });

  it('exports a partial trace and a long one; --out elsewhere, even named execution.json', async () => {
    const dir = await vncuaRun(
      'partial',
      Array.from({ length: 40 }, (_, i) => sampleEntry(i)),
      false,
    );
    const out = join(root, 'for-uitask', 'execution.json');
    const r = await cli(['--format', 'uitask', dir, '--out', out]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\(from partial_execution\.json, vncua, partial\); 5 failed attempts written/);
    const back = await readTrace(join(root, 'for-uitask'));
    expect(back.entries.map((e) => e.action)).toEqual((await readTrace(dir)).entries.map((e) => e.action));
  });

  it("refuses an existing output without --overwrite, and the run's own trace files always: exit 2, nothing written", async () => {
    const dir = await vncuaRun('run', [{ ...at(0), action: 'type_text', params: { text: 'a' }, task_marked_complete: false }]);
    await writeFile(join(dir, 'uitask_execution.json'), 'keep me');
    const refused = await cli(['--format', 'uitask', dir]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/^vncua export-trace: TRACE_ERR_EXISTS: .*--overwrite/);
    expect(refused.err.trim().split('\n')).toHaveLength(1);
    expect(await readFile(join(dir, 'uitask_execution.json'), 'utf8')).toBe('keep me');
    const original = await readFile(join(dir, 'execution.json'), 'utf8');
    for (const name of ['execution.json', 'partial_execution.json', 'result.json']) {
      const r = await cli(['--format', 'uitask', dir, '--out', join(dir, name), '--overwrite']);
      expect([r.code, r.err.split(':')[1]?.trim()], name).toEqual([2, 'TRACE_ERR_EXISTS']);
    }
    expect(await readFile(join(dir, 'execution.json'), 'utf8')).toBe(original);
    expect((await readdir(dir)).sort()).toEqual(['execution.json', 'uitask_execution.json']);
    const ok = await cli(['--format', 'uitask', dir, '--overwrite']);
    expect(ok.code).toBe(0);
    expect(await readFile(join(dir, 'uitask_execution.json'), 'utf8')).toBe('[{"action": "type_text", "params": {"text": "a"}, "task_marked_complete": false}]');
  });

  it("a trace that is neither vncua's nor uitask's, or no trace: one coded line, exit 2, nothing written", async () => {
    const dir = join(root, 'neither');
    await mkdir(dir);
    await writeFile(join(dir, 'execution.json'), JSON.stringify([{ action: 'wait', params: { seconds: 1 }, task_marked_complete: false }]));
    const r = await cli(['--format', 'uitask', dir]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^vncua export-trace: TRACE_ERR_INVALID: .*execution\.json \(entry 0, field "params\.duration"\)/);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(await readdir(dir)).toEqual(['execution.json']);
    const none = await cli(['--format', 'uitask', join(root, 'nothing')]);
    expect([none.code, none.err.split(':')[1]?.trim()]).toEqual([2, 'TRACE_ERR_NOT_FOUND']);
  });

  it('a middle click uitask cannot express: TRACE_ERR_EXPORT and nothing written, or left out with --skip-unsupported', async () => {
    const dir = await vncuaRun('middle', [
      { ...at(0), action: 'mouse_click', params: { position: { x: 1, y: 1 }, button: 'middle', click_type: 'single' }, task_marked_complete: false },
      { ...at(1), action: 'finish', params: { ok: true }, task_marked_complete: true },
    ]);
    const r = await cli(['--format', 'uitask', dir]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^vncua export-trace: TRACE_ERR_EXPORT: .*\(entry 0, field "params\.button"\).*--skip-unsupported/);
    expect(await readdir(dir)).toEqual(['execution.json']);
    const skipped = await cli(['--format', 'uitask', dir, '--skip-unsupported']);
    expect(skipped.code).toBe(0);
    expect(skipped.err).toBe("vncua export-trace: left out entry 0 (mouse_click, uitask cannot express it): params.button: uitask's MouseButton has only left and right\n");
    expect(await readFile(join(dir, 'uitask_execution.json'), 'utf8')).toBe(uitaskExecutionJson([uitaskFinish({ ok: true }, { done: true })]));
  });

  it("leaves out a person's entries (a takeover) and says so; --include-human keeps them", async () => {
    const dir = await vncuaRun('takeover', [
      { ...at(0), action: 'mouse_click', params: { position: { x: 1, y: 1 }, button: 'left', click_type: 'single' }, task_marked_complete: false },
      { ...at(1), action: 'type_text', actor: 'human', params: { text: 'hi' }, task_marked_complete: false },
      { ...at(2), action: 'finish', params: {}, task_marked_complete: true },
    ]);
    const r = await cli(['--format', 'uitask', dir]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/: 2 entries in uitask's execution\.json shape .*; 1 entry of a person \(a takeover\) left out; --include-human keeps them\n$/);
    expect(await readFile(join(dir, 'uitask_execution.json'), 'utf8')).toBe(
      uitaskExecutionJson([uitaskClick({ x: 1, y: 1 }, { done: false }), uitaskFinish(null, { done: true })]),
    );
    const kept = await cli(['--format', 'uitask', dir, '--include-human', '--overwrite']);
    expect(kept.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'uitask_execution.json'), 'utf8'))).toHaveLength(3);
  });

  it('parses its arguments and rejects bad ones with CLI_ERR_BAD_ARGS (exit 2)', async () => {
    expect(parseExportTraceArgs(['--format', 'uitask', 'runs/a', '--out', 'x.json', '--overwrite', '--skip-unsupported'])).toEqual({
      format: 'uitask',
      run: 'runs/a',
      out: 'x.json',
      overwrite: true,
      skipUnsupported: true,
      includeHuman: false,
    });
    expect(parseExportTraceArgs(['--format', 'uitask', 'runs/a', '--include-human'])).toMatchObject({ includeHuman: true });
    expect(parseExportTraceArgs(['--help'])).toBeUndefined();
    for (const bad of [
      ['runs/a'],
      ['--format', 'openai', 'runs/a'],
      ['--format', 'uitask'],
      ['--format', 'uitask', 'a', 'b'],
      ['--format', 'uitask', 'a', '--out'],
      ['--format', 'uitask', 'a', '--fast'],
    ]) {
      let error: unknown;
      try {
        parseExportTraceArgs(bad);
      } catch (e) {
        error = e;
      }
      expect(isVncuaError(error, 'CLI_ERR_BAD_ARGS'), bad.join(' ')).toBe(true);
    }
    const r = await cli(['--format', 'csv', join(root, 'x')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^vncua export-trace: CLI_ERR_BAD_ARGS: --format must be one of uitask/);
  });
});
