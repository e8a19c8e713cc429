/**
 * Where a suite's results go, and what is already on disk:
 * `OUT/<agent>/<W>_<H>/<task id>/` holds the Agent's files (execution.json, result.json, recording/…)
 * and the runner's task.json; with `--repeat K` (K > 1) each repeat n has its own
 * `OUT/<agent>/<W>_<H>/<task id>/<n>/`. One task directory never holds both layouts
 * (checkLayouts: EVAL_ERR_LAYOUT_MIXED). A finished run replaced by `--rerun` is moved aside to
 * `<dir>~N` (`~` is not allowed in task ids, so the name can never be another task's).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError } from '../harness/errors.ts';
import { runResultSchema, type RunResult } from '../harness/trace/schema.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { isFinishedResult } from './infra.ts';

/** The runner's file in each task directory: the task as run, and the attempt. */
export const TASK_FILE = 'task.json';

/** `1280_800` for 1280x800 (the directory name of a resolution). */
export function resolutionDir(size: ScreenSize): string {
  return `${size.width}_${size.height}`;
}

/** `1280x800`. */
export function resolutionLabel(size: ScreenSize): string {
  return `${size.width}x${size.height}`;
}

/** A task's result directory. */
export function taskDir(out: string, agent: string, size: ScreenSize, taskId: string): string {
  return join(out, agent, resolutionDir(size), taskId);
}

/** One run's directory: the task directory when `repeats` is 1, else its `<repeat>/` subdirectory. */
export function runDir(out: string, agent: string, size: ScreenSize, taskId: string, repeat: number, repeats: number): string {
  const dir = taskDir(out, agent, size, taskId);
  return repeats > 1 ? join(dir, String(repeat)) : dir;
}

/** Separator of a run moved aside by --rerun: `<dir>~1`, `<dir>~2`, … */
export const MOVED_ASIDE_SEP = '~';
/** True for the name of a run directory moved aside (`ok-1~1`, `2~1`); scoring skips them. */
export function isMovedAsideName(name: string): boolean {
  return /~\d+$/.test(name);
}

/** Files and directories whose presence makes a directory a run directory. */
const RUN_ENTRY_NAMES = new Set([TASK_FILE, TRACE_FILES.result, TRACE_FILES.execution, TRACE_FILES.partial, 'recording']);
/** A repeat's directory name inside a task directory. */
export const REPEAT_DIR = /^[1-9]\d*$/;

/** Which layout a task directory holds: nothing (missing or empty), one run, numbered repeats, or both. */
export type TaskLayout = 'none' | 'single' | 'repeats' | 'mixed';

/** Read the layout of a task directory (`OUT/<agent>/<W>_<H>/<task id>/`). */
export async function readTaskLayout(dir: string): Promise<TaskLayout> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 'none';
  }
  const single = entries.some((e) => RUN_ENTRY_NAMES.has(e.name));
  const repeats = entries.some((e) => e.isDirectory() && REPEAT_DIR.test(e.name));
  return single && repeats ? 'mixed' : single ? 'single' : repeats ? 'repeats' : 'none';
}

/**
 * EVAL_ERR_LAYOUT_MIXED unless every task directory fits `repeats` (1: a single run in it; K > 1:
 * numbered repeats in it): a suite never mixes the two layouts for one task.
 */
export async function checkLayouts(taskDirs: Iterable<string>, repeats: number): Promise<void> {
  const bad: Array<{ dir: string; holds: TaskLayout }> = [];
  for (const dir of new Set(taskDirs)) {
    const layout = await readTaskLayout(dir);
    if (layout === 'mixed' || (repeats === 1 && layout === 'repeats') || (repeats > 1 && layout === 'single')) bad.push({ dir, holds: layout });
  }
  if (bad.length === 0) return;
  const what = (l: TaskLayout) =>
    l === 'mixed' ? 'both a single run and numbered repeats' : l === 'repeats' ? 'numbered repeats (<task id>/<n>/, from --repeat K)' : 'a single run (from --repeat 1)';
  throw new VncuaError(
    'EVAL_ERR_LAYOUT_MIXED',
    `${bad[0]!.dir} holds ${what(bad[0]!.holds)}${bad.length > 1 ? ` (and ${bad.length - 1} more task director${bad.length === 2 ? 'y' : 'ies'})` : ''}, which --repeat ${repeats} would mix with ${repeats === 1 ? 'a single run' : 'numbered repeats'}; nothing was run. Run with the --repeat those results were made with, or give another --out.`,
    { details: { repeats, dirs: bad } },
  );
}

/** What a task directory holds: nothing, a finished run (with its result), or leftovers to clear (partial, cancelled, infra). */
export type DirState = { state: 'missing' } | { state: 'finished'; result: RunResult } | { state: 'unfinished'; result?: RunResult };

/** Read the state of a task directory. */
export async function readDirState(dir: string): Promise<DirState> {
  let text: string;
  try {
    text = await readFile(join(dir, TRACE_FILES.result), 'utf8');
  } catch {
    return { state: (await exists(dir)) ? 'unfinished' : 'missing' };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { state: 'unfinished' };
  }
  const r = runResultSchema.safeParse(data);
  if (!r.success) return { state: 'unfinished' };
  return isFinishedResult(r.data) ? { state: 'finished', result: r.data } : { state: 'unfinished', result: r.data };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
