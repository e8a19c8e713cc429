/**
 * Where a suite's results go, and what is already on disk:
 * `OUT/<agent>/<W>_<H>/<task id>/` holds the Agent's files (execution.json, result.json, recording/…)
 * and the runner's task.json.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScreenSize } from '../harness/desktop/size.ts';
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
