/** `vncua process` (called through its run(), as cli/main.ts will): arguments, per-run lines, exit codes. */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { runCaptured } from './test-helpers/capture.ts';
import { writeUitaskRun, writeVncuaRun } from '../recorder/process/test-helpers/runs.ts';
import { parseProcessArgs, run } from './process.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'vncua-cli-process-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Run the command, capturing what it prints. */
const cli = (argv: string[]) => runCaptured(run, argv);

describe('vncua process', () => {
  it('parses its flags and rejects bad ones with CLI_ERR_BAD_ARGS', () => {
    expect(parseProcessArgs(['runs', '--overwrite', '--jobs', '3', '--settle-ms', '250', '--video'])).toEqual({
      root: 'runs',
      overwrite: true,
      jobs: 3,
      settleMs: 250,
      video: true,
    });
    expect(parseProcessArgs(['runs'])).toEqual({ root: 'runs', overwrite: false, jobs: 1, settleMs: 1000, video: false });
    expect(parseProcessArgs(['--help'])).toBeUndefined();
    for (const bad of [[], ['a', 'b'], ['runs', '--jobs', '0'], ['runs', '--jobs', 'x'], ['runs', '--jobs'], ['runs', '--settle-ms', '-5'], ['runs', '--fast']]) {
      let error: unknown;
      try {
        parseProcessArgs(bad);
      } catch (e) {
        error = e;
      }
      expect(isVncuaError(error, 'CLI_ERR_BAD_ARGS'), bad.join(' ')).toBe(true);
    }
  });

  it('processes the runs under a root, one line each; a trace that cannot be read fails after the others, exit 2 (bad input)', async () => {
    await writeVncuaRun(join(root, 'a'));
    const bad = await writeVncuaRun(join(root, 'b'));
    await writeFile(join(bad, 'execution.json'), 'not json');
    await writeVncuaRun(join(root, 'c'));
    const r = await cli([root]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^ok {3}a \(4 actions, 8 images/m);
    expect(r.out).toMatch(/^FAIL b: TRACE_ERR_INVALID: /m);
    expect(r.out).toMatch(/^ok {3}c \(/m);
    expect(r.out).toMatch(/processed 3 runs in .* 2 ok, 1 failed/);
    expect(JSON.parse(await readFile(join(root, 'c', 'action_screenshots.json'), 'utf8')).actions).toHaveLength(4);
    await rm(bad, { recursive: true });
    const again = await cli([root]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/^skip a \(already processed/m);
  });

  it("reads a uitask run as uitask writes it; a trace that is neither vncua's nor uitask's fails naming entry and field, and nothing is written for it", async () => {
    await writeUitaskRun(join(root, 'u'));
    const flat = await writeUitaskRun(join(root, 'v'));
    // vncua's flat params without vncua's index and timing: neither format.
    const click = { action: 'mouse_click', params: { position: { x: 10, y: 10 }, button: 'left', click_type: 'single' }, task_marked_complete: false };
    await writeFile(join(flat, 'execution.json'), JSON.stringify([click]));
    const r = await cli([root]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^ok {3}u \(4 actions, /m);
    expect(r.out).toMatch(/^FAIL v: TRACE_ERR_INVALID: .*execution\.json \(entry 0, field "params\.action"\)/m);
    expect((await readdir(flat)).sort()).toEqual(['execution.json', 'recording']);
    // The run alone: the same one-line error, exit 2, nothing written.
    const alone = await cli([flat]);
    expect(alone.code).toBe(2);
    expect(alone.out).toMatch(/^FAIL \.: TRACE_ERR_INVALID: /m);
    expect((await readdir(flat)).sort()).toEqual(['execution.json', 'recording']);
  });

  it('exits 2 on bad arguments and 1 when there is no run', async () => {
    expect((await cli(['--jobs', 'x', root])).code).toBe(2);
    const none = await cli([root]);
    expect(none.code).toBe(1);
    expect(none.err).toContain('PROCESS_ERR_NO_RUNS');
    expect((await cli(['--help'])).code).toBe(0);
  });
});
