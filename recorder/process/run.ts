/**
 * processRun(): one run directory → `action_screenshots/` + `action_screenshots.json` (+ the HTML step
 * report, + optionally the video). Frames are matched to actions by timestamp, never by order:
 *   - NNNN_before.png: the screen as of the action's started_at (or, for an action that opened the VNC
 *     connection, its first frame, if the action's input came after it);
 *   - NNNN_after.png: the screen once it settled after ended_at (see settle.ts), capped at settleMs after
 *     ended_at and never past the next action's started_at;
 *   - success.png: the screen when the success check that first saw the task complete answered (its
 *     `success_check.at` in the trace, or result.json's `success_at`), for the first successful step.
 * uitask traces carry no timestamps: they are aligned to the recorded client input first ('inferred').
 *
 * A damaged recording gives every frame up to the damage and warnings in the JSON; an image whose instant lies
 * past the damage (or past the end of the data) is the last frame known, marked `stale` with the reason and the
 * instant it shows (`*_stale`, `*_stale_reason`, `*_shows_at`). Only a run that has no trace or no recording at
 * all fails. An existing complete output is left alone unless `overwrite`.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { VncuaError, isVncuaError } from '../../harness/errors.ts';
import { ModelUsageTally } from '../../harness/trace/model-calls.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import type { DistributiveOmit, EntryTiming, RunResult, TraceEntry } from '../../harness/trace/schema.ts';
import { Replayer, type Frame } from '../replay/replayer.ts';
import { writeStepReport } from '../report/index.ts';
import { alignUitaskTrace } from '../uitask/index.ts';
import {
  ACTION_SCREENSHOTS_DIR,
  ACTION_SCREENSHOTS_JSON,
  SUCCESS_IMAGE,
  imagePath,
  isComplete,
  type ActionScreenshotsFile,
  type ActionShot,
  type ShotWarning,
  type StepModelUsage,
  type SuccessShot,
} from './output.ts';
import { PngWriter } from './png.ts';
import { QUIET_MS, settleAfter } from './settle.ts';
import { writeRunVideo } from './video.ts';

/** Default cap (ms) on how long after an action ends its "after" frame may be taken. */
export const DEFAULT_SETTLE_MS = 1000;

/** Options of processRun(). */
export interface ProcessRunOptions {
  /** Regenerate even when a complete output exists (default false). */
  overwrite?: boolean;
  /** Cap on the "after" frame's delay after ended_at, ms (default 1000). */
  settleMs?: number;
  /** Also write recording.mp4 (or .webm) with click markers (default false). */
  video?: boolean;
  /** Draw the cursor into the images (default true: agents see it, and so does the reader of the report). */
  cursor?: boolean;
  /**
   * Write `action_screenshots/` and `action_screenshots.json` into this directory instead of the run's, and
   * nothing else (no step report, no video): the run directory is only read (`vncua export` renders this way).
   */
  outputDir?: string;
}

/** What processRun() did. */
export interface ProcessRunResult {
  runDir: string;
  /** processed: outputs written; skipped: a complete output already existed. */
  status: 'processed' | 'skipped';
  actions: number;
  /** Images written (0 when skipped). */
  images: number;
  warnings: ShotWarning[];
  /** Path of the step report, or null if it could not be written (a warning says why). */
  report: string | null;
  /** The video notice line, when a video was asked for. */
  video: string | null;
  durationMs: number;
  /** The process that did the work (shows which worker took the run). */
  pid: number;
}

type Timed = DistributiveOmit<TraceEntry, keyof EntryTiming> & { started_at: number | null; ended_at: number | null; duration_ms: number | null };

/** Process one run directory (holding execution.json or partial_execution.json and recording/). */
export async function processRun(runDir: string, options: ProcessRunOptions = {}): Promise<ProcessRunResult> {
  const t0 = performance.now();
  const dir = resolve(runDir);
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  if (!(Number.isFinite(settleMs) && settleMs >= 0)) throw new VncuaError('CLI_ERR_BAD_ARGS', `settleMs must be a number >= 0, got ${settleMs}`, { details: { settleMs } });
  const trace = await readTrace(dir);
  const traceFile = basename(trace.path);
  // Where the outputs go: the run directory, or (outputDir) elsewhere, with no report or video.
  const outDir = options.outputDir === undefined ? dir : resolve(options.outputDir);
  const own = outDir === dir;
  if (!options.overwrite && (await isComplete(outDir, trace.entries.length, traceFile))) {
    const report = own ? await ensureReport(dir, []) : null;
    return { runDir: dir, status: 'skipped', actions: trace.entries.length, images: 0, warnings: [], report, video: null, durationMs: performance.now() - t0, pid: process.pid };
  }
  const warnings: ShotWarning[] = [];
  const result = await readOptionalResult(dir, warnings);
  const task = await readTask(dir);
  const replayer = await Replayer.open(join(dir, 'recording'));
  const dataEnd = replayer.dataEnd;
  const firstFrame = await replayer.firstFrameAt();
  const inputTimes = replayer.inputEvents().map((e) => e.t);

  // Timing: vncua traces have it; uitask traces are aligned to the recorded client input.
  let entries: Timed[];
  let alignment: 'timestamps' | 'inferred' = 'timestamps';
  /** Entries whose start bounds the previous action's "after" frame (inferred: only those timed by their own input). */
  let bounding = (_i: number) => true;
  if (trace.entries.some((e) => e.started_at === undefined || e.ended_at === undefined)) {
    alignment = 'inferred';
    const aligned = alignUitaskTrace(trace.entries, replayer.inputEvents(), {
      ...(Number.isFinite(replayer.startTime) ? { startAt: replayer.startTime } : {}),
      ...(Number.isFinite(dataEnd) ? { endAt: dataEnd } : {}),
    });
    warnings.push(...aligned.warnings.map((w) => ({ code: w.code, message: w.message })));
    bounding = (i) => aligned.matches[i]?.placement === 'input';
    entries = aligned.entries.map((e, i) => {
      const unknown = aligned.matches[i]?.placement === 'unknown';
      return { ...e, started_at: unknown ? null : e.started_at, ended_at: unknown ? null : e.ended_at, duration_ms: unknown ? null : e.duration_ms };
    });
  } else {
    entries = trace.entries.map((e) => ({ ...e, started_at: e.started_at ?? null, ended_at: e.ended_at ?? null, duration_ms: e.duration_ms ?? null }));
  }

  // Build the images into a fresh directory; swap it in at the end (the JSON, written last, marks completion).
  if (!own) await mkdirOrFail(outDir);
  const tmpDir = join(outDir, `${ACTION_SCREENSHOTS_DIR}.tmp-${process.pid}`);
  await rm(tmpDir, { recursive: true, force: true });
  await mkdirOrFail(tmpDir);
  const png = new PngWriter();
  let shots: ActionShot[];
  let size: { width: number; height: number };
  try {
    shots = entries.map((e) => ({
      index: e.index,
      action: e.action,
      ...(e.actor === 'human' ? { actor: 'human' as const } : {}),
      params: e.params as Record<string, unknown>,
      started_at: e.started_at,
      ended_at: e.ended_at,
      duration_ms: e.duration_ms,
      task_marked_complete: e.task_marked_complete ?? null,
      error: 'error' in e && e.error ? { code: e.error.code, message: e.error.message } : null,
      before: null,
      after: null,
      before_at: null,
      after_at: null,
      settled: null,
      before_stale: null,
      before_stale_reason: null,
      before_shows_at: null,
      after_stale: null,
      after_stale_reason: null,
      after_shows_at: null,
      width: null,
      height: null,
      ...modelOf(e.meta),
    }));
    const missing: string[] = [];
    const stale: string[] = [];
    let firstSize: { width: number; height: number } | null = null;
    const cursor = options.cursor ?? true;
    const save = async (shot: ActionShot, which: 'before' | 'after', at: number): Promise<void> => {
      const f: Frame | null = await replayer.frameAt(at, { cursor });
      if (!f) {
        missing.push(`${shot.index} ${which}`);
        return;
      }
      shot[`${which}_stale`] = f.stale !== null;
      shot[`${which}_stale_reason`] = f.stale?.reason ?? null;
      shot[`${which}_shows_at`] = f.stale?.knownUntil ?? at;
      if (f.stale) stale.push(`${shot.index} ${which} (${f.stale.reason})`);
      const rel = imagePath(shot.index, which);
      await png.add(f, join(tmpDir, rel.slice(ACTION_SCREENSHOTS_DIR.length + 1))).catch((cause: unknown) => {
        throw writeError(join(outDir, rel), cause);
      });
      shot[which] = rel;
      shot[`${which}_at`] = at;
      if (which === 'before' || shot.width === null) {
        shot.width = f.width;
        shot.height = f.height;
      }
      firstSize ??= { width: f.width, height: f.height };
    };

    // Instants are asked in time order (the replayer only moves forward); results go by entry index.
    const order = shots.map((_s, i) => i).filter((i) => shots[i]!.started_at !== null && shots[i]!.ended_at !== null);
    order.sort((a, b) => shots[a]!.started_at! - shots[b]!.started_at! || a - b);
    let lastAt = -Infinity;
    for (let k = 0; k < order.length; k++) {
      const shot = shots[order[k]!]!;
      // An inferred time that is only a guess (placed between its neighbours) never goes back before the previous
      // action's after frame: the replay moves forward only, and that frame is the best guess of the screen then.
      const guessed = !bounding(order[k]!);
      const started = guessed ? Math.max(shot.started_at!, lastAt) : shot.started_at!;
      const ended = Math.max(shot.ended_at!, started);
      // An action that opened the connection (the Agent connects on its first action) started before the first
      // frame: that frame is still the screen before it, if none of its input was sent before the frame arrived.
      let beforeAt = started;
      if (firstFrame !== null && started < firstFrame && firstFrame <= ended) {
        const firstInput = inputTimes.find((t) => t >= started) ?? Infinity;
        if (firstInput >= firstFrame) beforeAt = firstFrame;
      }
      await save(shot, 'before', beforeAt);
      let next = Infinity;
      for (let n = k + 1; n < order.length; n++) {
        if (!bounding(order[n]!)) continue;
        next = shots[order[n]!]!.started_at!;
        break;
      }
      const s = await settleAfter(replayer, ended, ended + settleMs, next, dataEnd, QUIET_MS);
      await save(shot, 'after', s.at);
      // A frame older than its instant cannot show that the screen settled.
      shot.settled = s.settled && shot.after_stale !== true;
      lastAt = Math.max(lastAt, s.at);
    }
    // The frame of the first success, asked last: its instant usually falls inside an action's settle search,
    // which has moved the replay past it, so asking it in the loop would replay from the start as well.
    const success = successOf(entries, result);
    if (success?.at != null) {
      const f = success.at <= dataEnd ? await replayer.frameAt(success.at, { cursor }) : null;
      if (f) {
        await png.add(f, join(tmpDir, SUCCESS_IMAGE.slice(ACTION_SCREENSHOTS_DIR.length + 1))).catch((cause: unknown) => {
          throw writeError(join(outDir, SUCCESS_IMAGE), cause);
        });
        success.image = SUCCESS_IMAGE;
      } else missing.push(`${success.index} success`);
    }
    const untimed = shots.filter((s) => s.started_at === null || s.ended_at === null).map((s) => s.index);
    try {
      await png.done();
    } catch (cause) {
      throw writeError(tmpDir, cause);
    }

    warnings.unshift(...replayer.warnings.map((w) => ({ code: w.code, message: w.message })));
    if (missing.length > 0) {
      warnings.push({
        code: 'RECORDING_ERR_NOT_REACHED',
        message: `${missing.length} image(s) fall before the recording's first complete frame: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''}.`,
      });
    }
    if (stale.length > 0) {
      warnings.push({
        code: 'RECORDING_ERR_STALE_FRAME',
        message: `${stale.length} image(s) show an older screen than their instant (marked stale, with the instant they show): ${stale.slice(0, 20).join(', ')}${stale.length > 20 ? ', …' : ''}.`,
      });
    }
    if (untimed.length > 0) warnings.push({ code: 'PROCESS_ERR_ALIGNMENT', message: `Action(s) ${untimed.join(', ')} have no known time: they have no images.` });
    size = firstSize ?? { width: 1280, height: 800 };
    if (!firstSize)
      warnings.push({ code: 'RECORDING_ERR_NOT_REACHED', message: 'The recording holds no complete frame at any action; width and height are the default 1280x800.' });

    const out: ActionScreenshotsFile = {
      version: 1,
      source: trace.source,
      alignment,
      task,
      outcome: result ? outcomeOf(result, entries) : null,
      width: size.width,
      height: size.height,
      settle_ms: settleMs,
      quiet_ms: QUIET_MS,
      trace_file: traceFile,
      warnings,
      success,
      actions: shots,
    };
    const finalDir = join(outDir, ACTION_SCREENSHOTS_DIR);
    const jsonPath = join(outDir, ACTION_SCREENSHOTS_JSON);
    try {
      await rm(jsonPath, { force: true });
      await rm(finalDir, { recursive: true, force: true });
      await rename(tmpDir, finalDir);
      const tmpJson = `${jsonPath}.tmp-${process.pid}`;
      await writeFile(tmpJson, `${JSON.stringify(out, null, 2)}\n`);
      await rename(tmpJson, jsonPath);
    } catch (cause) {
      throw writeError(jsonPath, cause);
    }
  } finally {
    await png.done().catch(() => {}); // no write may land after the temp directory is gone
    await rm(tmpDir, { recursive: true, force: true }).catch(() => {});
  }
  const report = own ? await ensureReport(dir, warnings, true) : null;
  let video: string | null = null;
  if (options.video && own) {
    try {
      video = await writeRunVideo(dir, entries, size, Number.isFinite(dataEnd) ? dataEnd : undefined);
    } catch (e) {
      video = `video: failed (${isVncuaError(e) ? `${e.code}: ` : ''}${(e as Error).message}) — the screenshots and report are written`;
    }
  }
  return { runDir: dir, status: 'processed', actions: shots.length, images: png.count, warnings, report, video, durationMs: performance.now() - t0, pid: process.pid };
}

/** Write the HTML step report (recorder/report); a failure becomes a warning, not a failed run. */
async function ensureReport(dir: string, warnings: ShotWarning[], always = false): Promise<string | null> {
  try {
    if (!always) {
      const html = join(dir, 'action_screenshots.html');
      const have = await readFile(html, 'utf8').then(
        () => true,
        () => false,
      );
      if (have) return html;
    }
    return await writeStepReport(dir);
  } catch (e) {
    warnings.push({ code: isVncuaError(e) ? e.code : 'REPORT_ERR_WRITE', message: `The step report was not written: ${(e as Error).message}` });
    return null;
  }
}

async function mkdirOrFail(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (cause) {
    throw writeError(path, cause);
  }
}

function writeError(path: string, cause: unknown): VncuaError {
  if (isVncuaError(cause)) return cause;
  return new VncuaError(
    'PROCESS_ERR_WRITE',
    `Could not write ${path}: ${(cause as Error)?.message ?? String(cause)}. Check that the run directory is writable and the disk is not full.`,
    {
      cause,
      details: { path },
    },
  );
}

async function readOptionalResult(dir: string, warnings: ShotWarning[]): Promise<RunResult | null> {
  try {
    return await readResult(dir);
  } catch (e) {
    if (isVncuaError(e, 'TRACE_ERR_NOT_FOUND')) return null;
    warnings.push({ code: isVncuaError(e) ? e.code : 'TRACE_ERR_INVALID', message: `result.json was not used: ${(e as Error).message}` });
    return null;
  }
}

/** The task text from task.json (a string, or an object with goal / task / ques / instruction), or null. */
async function readTask(dir: string): Promise<string | null> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(join(dir, 'task.json'), 'utf8'));
  } catch {
    return null;
  }
  if (typeof data === 'string') return data;
  if (typeof data === 'object' && data !== null) {
    for (const k of ['goal', 'task', 'ques', 'instruction']) {
      const v = (data as Record<string, unknown>)[k];
      if (typeof v === 'string') return v;
    }
  }
  return null;
}

/** The first successful step and its evidence: the entry's success_check, else result.json's evidence when it names that entry. */
function successOf(entries: readonly Timed[], result: RunResult | null): SuccessShot | null {
  const e = entries.find((x) => x.task_marked_complete === true);
  if (!e) return null;
  const ev = e.success_check ?? (result?.evidence?.entry_index === e.index ? result.evidence : undefined);
  return {
    index: e.index,
    at: ev?.at ?? null,
    phase: ev?.phase ?? null,
    rule: ev?.rule ?? null,
    pattern: ev?.pattern ?? null,
    snippet: ev?.snippet ?? null,
    url: ev?.url ?? null,
    image: null,
  };
}

/** Outcome from result.json; success = some action's success check said the task is complete. */
function outcomeOf(r: RunResult, entries: readonly Timed[]): NonNullable<ActionScreenshotsFile['outcome']> {
  const checks = entries.map((e) => e.task_marked_complete).filter((v): v is boolean => typeof v === 'boolean');
  return {
    status: r.status,
    steps: r.steps,
    duration_ms: r.durationMs,
    success: checks.length === 0 ? null : checks.includes(true),
    ...(r.reason !== undefined ? { reason: r.reason } : {}),
    ...(r.error ? { error: { code: r.error.code, message: r.error.message } } : {}),
    ...(r.model_calls !== undefined
      ? { model: { calls: r.model_calls, input_tokens: r.input_tokens ?? null, output_tokens: r.output_tokens ?? null, cost_usd: r.cost_usd ?? null } }
      : {}),
  };
}

/** `{ model }` of a step whose meta records model calls (tokens and cost summed; null unless every call had them), else nothing. */
function modelOf(meta: unknown): { model?: StepModelUsage } {
  const tally = new ModelUsageTally();
  tally.addMeta(meta);
  const t = tally.totals();
  if (!t) return {};
  return { model: { calls: t.model_calls, input_tokens: t.input_tokens ?? null, output_tokens: t.output_tokens ?? null, cost_usd: t.cost_usd ?? null } };
}
