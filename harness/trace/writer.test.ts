import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VncuaError, isVncuaError } from '../errors.ts';
import { parseExecution } from './parse.ts';
import { RUN_STATUSES, runResultSchema } from './schema.ts';
import { sampleEntry } from './test-fixtures/entries.ts';
import { TraceWriter } from './writer.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-trace-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return isVncuaError(e) ? e.code : `not a VncuaError: ${String(e)}`;
  }
}

describe('TraceWriter', () => {
  it('writes the exact JSON: partial after each append, execution.json at finalize, partial removed', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    expect(await readFile(w.paths.partial, 'utf8')).toBe('[]\n');

    const first = await w.append({
      action: 'mouse_click',
      params: { position: { x: 10, y: 20 }, button: 'left', click_type: 'single' },
      task_marked_complete: false,
      started_at: 1763780000123.4,
      ended_at: 1763780000130.9,
    });
    expect(first.index).toBe(0);
    expect(first.duration_ms).toBe(7.5);
    const line0 =
      '{"index":0,"action":"mouse_click","params":{"position":{"x":10,"y":20},"button":"left","click_type":"single"},' +
      '"task_marked_complete":false,"started_at":1763780000123.4,"ended_at":1763780000130.9,"duration_ms":7.5}';
    expect(await readFile(w.paths.partial, 'utf8')).toBe(`[\n${line0}\n]\n`);

    await w.append({
      action: 'wait',
      params: { seconds: -1 },
      task_marked_complete: null,
      started_at: 1763780000131,
      ended_at: 1763780000131.25,
      error: { code: 'ACTION_ERR_BAD_ARGUMENT', message: 'seconds must be >= 0' },
      meta: { model: { latency_ms: 812 } },
    });
    const line1 =
      '{"index":1,"action":"wait","params":{"seconds":-1},"task_marked_complete":null,"started_at":1763780000131,' +
      '"ended_at":1763780000131.25,"duration_ms":0.25,"error":{"code":"ACTION_ERR_BAD_ARGUMENT","message":"seconds must be >= 0"},' +
      '"meta":{"model":{"latency_ms":812}}}';
    const expected = `[\n${line0},\n${line1}\n]\n`;
    expect(await readFile(w.paths.partial, 'utf8')).toBe(expected);
    expect(w.length).toBe(2);

    await w.finalize();
    expect(await readFile(w.paths.execution, 'utf8')).toBe(expected);
    expect((await readdir(dir)).sort()).toEqual(['execution.json']);
  });

  it('writes a person\'s entry with actor "human" after its action; markComplete keeps it; another actor is refused', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    const e = await w.append({
      action: 'type_text',
      actor: 'human',
      params: { text: 'hi' },
      task_marked_complete: false,
      started_at: 10,
      ended_at: 12,
      meta: { released_at_handback: true },
    });
    expect(Object.keys(e)).toEqual(['index', 'action', 'actor', 'params', 'task_marked_complete', 'started_at', 'ended_at', 'duration_ms', 'meta']);
    expect(await readFile(w.paths.partial, 'utf8')).toContain('{"index":0,"action":"type_text","actor":"human","params":{"text":"hi"}');
    const check = { phase: 'grace' as const, at: 20, rule: 'text' as const, pattern: '>code#1</', snippet: 'code#1', url: 'http://127.0.0.1:1/' };
    expect(await w.markComplete(0, check)).toMatchObject({ actor: 'human', task_marked_complete: true });
    expect(parseExecution(JSON.parse(await readFile(w.paths.partial, 'utf8')))[0]).toMatchObject({ actor: 'human', success_check: check });
    const bad = { action: 'type_text', actor: 'robot', params: { text: 'x' }, task_marked_complete: null, started_at: 1, ended_at: 2 } as unknown as Parameters<
      TraceWriter['append']
    >[0];
    const err = await w.append(bad).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(VncuaError);
    expect((err as VncuaError).details).toMatchObject({ index: 1, field: 'actor' });
    expect(w.length).toBe(1);
  });

  it('finalize with no entries writes [] and removes the partial file', async () => {
    const w = new TraceWriter(join(dir, 'nested', 'run'));
    await w.open();
    await w.finalize();
    expect(await readFile(w.paths.execution, 'utf8')).toBe('[]\n');
    expect(await readdir(w.outputDir)).toEqual(['execution.json']);
  });

  it('serializes concurrent appends in call order and finalize waits for them; no .tmp files remain', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    const pending = Array.from({ length: 60 }, (_, i) => w.append(sampleEntry(i)));
    const fin = w.finalize();
    const written = await Promise.all(pending);
    await fin;
    expect(written.map((e) => e.index)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    const entries = parseExecution(JSON.parse(await readFile(w.paths.execution, 'utf8')), w.paths.execution);
    expect(entries).toEqual(written);
    expect(entries.map((e) => e.action)).toEqual(Array.from({ length: 60 }, (_, i) => sampleEntry(i).action));
    expect(await readdir(dir)).toEqual(['execution.json']);
  });

  it('markComplete: an earlier entry becomes complete with its evidence, on disk at once and in execution.json; the others are unchanged', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    const e0 = await w.append({ action: 'type_text', params: { text: 'abc' }, task_marked_complete: false, started_at: 100, ended_at: 110, meta: { m: 1 } });
    const e1 = await w.append({ action: 'finish', params: {}, task_marked_complete: false, started_at: 111, ended_at: 111.5 });
    const before = await readFile(w.paths.partial, 'utf8');
    const check = { phase: 'grace' as const, at: 320.5, rule: 'text' as const, pattern: '>code#1</', snippet: '<div id="r">code#1</div>', url: 'http://127.0.0.1:1/t.html' };
    const marked = await w.markComplete(0, check);
    expect(marked).toEqual({ ...e0, task_marked_complete: true, success_check: check });
    // Field order: success_check sits before meta, as append writes it.
    expect(Object.keys(marked)).toEqual(['index', 'action', 'params', 'task_marked_complete', 'started_at', 'ended_at', 'duration_ms', 'success_check', 'meta']);
    const partial = await readFile(w.paths.partial, 'utf8');
    expect(partial).not.toBe(before);
    expect(parseExecution(JSON.parse(partial))).toEqual([marked, e1]);
    await w.markComplete(1, { ...check, phase: 'final', at: 900 });
    await w.finalize();
    const final = parseExecution(JSON.parse(await readFile(w.paths.execution, 'utf8')));
    expect(final.map((e) => [e.index, e.task_marked_complete, e.success_check?.phase])).toEqual([
      [0, true, 'grace'],
      [1, true, 'final'],
    ]);
    expect(await codeOf(w.markComplete(0, check))).toBe('TRACE_ERR_ILLEGAL_STATE');
  });

  it('markComplete refuses an unknown index or bad evidence (TRACE_ERR_INVALID) and changes nothing; it is serialized with appends', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    const check = { phase: 'grace' as const, at: 1, rule: 'selector' as const, pattern: '#ok', snippet: '<b id="ok"></b>', url: 'about:blank' };
    expect(await codeOf(w.markComplete(0, check))).toBe('TRACE_ERR_INVALID');
    await w.append(sampleEntry(0));
    expect(await codeOf(w.markComplete(1, check))).toBe('TRACE_ERR_INVALID');
    expect(await codeOf(w.markComplete(0, { ...check, phase: 'later' as 'grace' }))).toBe('TRACE_ERR_INVALID');
    expect(await codeOf(w.markComplete(0, { ...check, extra: 1 } as typeof check))).toBe('TRACE_ERR_INVALID');
    expect(parseExecution(JSON.parse(await readFile(w.paths.partial, 'utf8')))[0]!.task_marked_complete).toBe(sampleEntry(0).task_marked_complete);
    // Interleaved without awaiting: every append lands, the marked entry stays marked.
    const ops = [w.append(sampleEntry(1)), w.markComplete(0, check), w.append(sampleEntry(2)), w.markComplete(2, check), w.append(sampleEntry(3))];
    await Promise.all(ops);
    const onDisk = parseExecution(JSON.parse(await readFile(w.paths.partial, 'utf8')));
    expect(onDisk.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(onDisk.map((e) => e.success_check !== undefined)).toEqual([true, false, true, false]);
    expect(onDisk[0]!.task_marked_complete).toBe(true);
  });

  it('durable mode writes the same bytes', async () => {
    const a = new TraceWriter(join(dir, 'a'));
    const b = new TraceWriter(join(dir, 'b'), { durable: true });
    for (const w of [a, b]) {
      await w.open();
      for (let i = 0; i < 10; i++) await w.append(sampleEntry(i));
      await w.finalize();
      await w.writeResult({ status: 'finished', steps: 10, durationMs: 12.5 });
    }
    expect(await readFile(b.paths.execution, 'utf8')).toBe(await readFile(a.paths.execution, 'utf8'));
    expect(await readFile(b.paths.result, 'utf8')).toBe(await readFile(a.paths.result, 'utf8'));
    expect((await readdir(b.outputDir)).sort()).toEqual(['execution.json', 'result.json']);
  });

  it('refuses an invalid entry with TRACE_ERR_INVALID naming index and field, and does not record it', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    await w.append(sampleEntry(0));
    const bad = w.append({
      action: 'mouse_scroll',
      params: { position: { x: 1, y: 2 }, direction: 'sideways' as 'up', repeat: 1 },
      task_marked_complete: null,
      started_at: 1,
      ended_at: 2,
    });
    const err = await bad.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VncuaError);
    expect((err as VncuaError).code).toBe('TRACE_ERR_INVALID');
    expect((err as VncuaError).details).toMatchObject({ index: 1, field: 'params.direction' });
    // ended before started: negative duration
    expect(await codeOf(w.append({ ...sampleEntry(1), started_at: 10, ended_at: 5 }))).toBe('TRACE_ERR_INVALID');
    expect(w.length).toBe(1);
    await w.append(sampleEntry(1));
    await w.finalize();
    const entries = parseExecution(JSON.parse(await readFile(w.paths.execution, 'utf8')));
    expect(entries.map((e) => e.index)).toEqual([0, 1]);
  });

  it('validate: false writes without checking (e.g. for benchmarks)', async () => {
    const w = new TraceWriter(dir, { validate: false });
    await w.open();
    await w.append({ action: 'wait', params: { seconds: -5 }, task_marked_complete: null, started_at: 1, ended_at: 2 });
    const text = await readFile(w.paths.partial, 'utf8');
    expect(JSON.parse(text)).toEqual([{ index: 0, action: 'wait', params: { seconds: -5 }, task_marked_complete: null, started_at: 1, ended_at: 2, duration_ms: 1 }]);
  });

  it('rejects append before open and after finalize with TRACE_ERR_ILLEGAL_STATE; finalize is idempotent', async () => {
    const w = new TraceWriter(dir);
    expect(await codeOf(w.append(sampleEntry(0)))).toBe('TRACE_ERR_ILLEGAL_STATE');
    expect(await codeOf(w.finalize())).toBe('TRACE_ERR_ILLEGAL_STATE');
    await w.open();
    await w.append(sampleEntry(0));
    await Promise.all([w.finalize(), w.finalize()]);
    await w.finalize();
    expect(await codeOf(w.append(sampleEntry(1)))).toBe('TRACE_ERR_ILLEGAL_STATE');
    expect(JSON.parse(await readFile(w.paths.execution, 'utf8'))).toHaveLength(1);
  });

  it('writes result.json for every status', async () => {
    const w = new TraceWriter(dir);
    for (const status of RUN_STATUSES) {
      const result =
        status === 'finished'
          ? { status, steps: 3, durationMs: 1234.5 }
          : { status, steps: 7, durationMs: 99, error: { code: `RUN_ERR_${status.toUpperCase()}`, message: `ended: ${status}` } };
      await w.writeResult(result);
      const text = await readFile(w.paths.result, 'utf8');
      expect(text).toBe(`${JSON.stringify(result, null, 2)}\n`);
      expect(runResultSchema.parse(JSON.parse(text))).toEqual(result);
    }
    expect(await readdir(dir)).toEqual(['result.json']);
  });

  it('refuses an invalid result with TRACE_ERR_INVALID naming the field', async () => {
    const w = new TraceWriter(dir);
    const err = await w.writeResult({ status: 'done' as 'finished', steps: 1, durationMs: 1 }).catch((e: unknown) => e);
    expect(isVncuaError(err, 'TRACE_ERR_INVALID')).toBe(true);
    expect((err as VncuaError).details).toMatchObject({ field: 'status' });
    expect(await codeOf(w.writeResult({ status: 'error', steps: -1, durationMs: 1 }))).toBe('TRACE_ERR_INVALID');
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes error.txt with message, code, stack and causes', async () => {
    const w = new TraceWriter(dir);
    const root = new Error('socket hang up');
    const err = new VncuaError('RFB_ERR_CLOSED', 'The VNC connection closed during step 4.', { cause: root, details: { step: 4 } });
    await w.writeError(err);
    const text = await readFile(w.paths.error, 'utf8');
    const lines = text.split('\n');
    expect(lines[0]).toBe('The VNC connection closed during step 4.');
    expect(lines[1]).toBe('code: RFB_ERR_CLOSED');
    expect(lines[2]).toBe('details: {"step":4}');
    expect(text).toContain(err.stack!);
    expect(text).toContain('\nCaused by:\nsocket hang up\n');
    expect(text).toContain(root.stack!);
    expect(text.endsWith('\n')).toBe(true);

    await w.writeError('plain string failure');
    expect(await readFile(w.paths.error, 'utf8')).toBe('plain string failure\n');
  });

  it('gives TRACE_ERR_WRITE with the path when the directory vanishes under it', async () => {
    const w = new TraceWriter(join(dir, 'run'));
    await w.open();
    await w.append(sampleEntry(0));
    await rm(w.outputDir, { recursive: true });
    const err = await w.append(sampleEntry(1)).catch((e: unknown) => e);
    expect(isVncuaError(err, 'TRACE_ERR_WRITE')).toBe(true);
    expect((err as VncuaError).details?.path).toBe(w.paths.partial);
    // the entry stays in the trace: once the directory is back, the next write holds both
    await mkdir(w.outputDir);
    await w.append(sampleEntry(2));
    expect(parseExecution(JSON.parse(await readFile(w.paths.partial, 'utf8'))).map((e) => e.index)).toEqual([0, 1, 2]);
  });

  it('gives TRACE_ERR_WRITE at open when the output path is under a regular file', async () => {
    await writeFile(join(dir, 'file'), 'x');
    const w = new TraceWriter(join(dir, 'file', 'run'));
    const err = await w.open().catch((e: unknown) => e);
    expect(isVncuaError(err, 'TRACE_ERR_WRITE')).toBe(true);
    expect((err as VncuaError).details?.path).toBe(w.outputDir);
  });
});
