/**
 * `vncua export ROOT --format jsonl`: every step of every run under ROOT as one JSON line
 * (harness/trace/export-line.ts, schemas/export-line.schema.json), for training. Runs are found and
 * judged as `vncua score` does (findRunDirs, scoreRunDir: the same verdicts); the action is given in
 * the trace's shape, as the TypeScript API's call (apiCall) and in uitask's shape (toUitaskEntry);
 * the before/after screenshots are PNG files beside the JSONL, copied from `vncua process`'s output
 * when the run has a complete one, else rendered from its recording by the same post-processor
 * (processRun with outputDir: nothing is written into the run), else null with the reason.
 * Nothing under ROOT is modified. The format is described in schemas/EXPORT.md.
 */
import { copyFile, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { apiCall } from '../harness/agent/apply-action.ts';
import { VncuaError, errorInfo, isVncuaError } from '../harness/errors.ts';
import type { ExportLine } from '../harness/trace/export-line.ts';
import { callCost, callTokens, modelCallsOf, roundUsd } from '../harness/trace/model-calls.ts';
import { readTrace, type ReadTrace } from '../harness/trace/reader.ts';
import type { TraceEntry } from '../harness/trace/schema.ts';
import { toUitaskEntry } from '../harness/trace/uitask.ts';
import { ACTION_SCREENSHOTS_JSON, isComplete, type ActionScreenshotsFile, type ActionShot } from '../recorder/process/output.ts';
import { processRuns, type RunJob } from '../recorder/process/root.ts';
import { TASK_FILE } from './layout.ts';
import { findRunDirs, scoreRunDir, type RunScore } from './score.ts';

/** The JSONL file's name when --out is a directory. */
export const EXPORT_JSONL = 'steps.jsonl';
/** The manifest's name (beside the JSONL): what was exported, filtered out and skipped. */
export const EXPORT_MANIFEST = 'export.json';
/** The images directory's name when --out is a directory. */
export const EXPORT_IMAGES = 'images';

/** What to export. */
export interface ExportOptions {
  /** A results root (vncua eval's --out) or any directory above run directories. */
  root: string;
  /** A directory (created; must be empty if it exists), or a FILE ending in .jsonl. Default: `<ROOT>-export/` beside ROOT. */
  out?: string;
  /** Only runs that succeeded (a success check saw the task complete). */
  successful?: boolean;
  /** Only these agents (any of them); empty: all. */
  agents?: readonly string[];
  /** Only these task groups; empty: all. */
  groups?: readonly string[];
  /** Only these resolutions (WxH); empty: all. */
  resolutions?: readonly string[];
  /** Worker processes rendering images from recordings (default 1: in this process), as `vncua process --jobs`. */
  jobs?: number;
  signal?: AbortSignal;
  /** Called as each run is written or skipped. */
  onRun?: (r: ExportedRun | SkippedRun) => void;
}

/** Where an export goes. */
export interface ExportPaths {
  jsonl: string;
  /** The directory the PNGs go into (`images/` in DIR, `<stem>.images/` beside FILE). */
  images: string;
  manifest: string;
}

/** A run written to the export. */
export interface ExportedRun {
  kind: 'exported';
  run_id: string;
  steps: number;
  /** process: copied from vncua process's output; rendered: from the recording; null: none (see reason). */
  screenshots: 'process' | 'rendered' | null;
  /** Why the run has no screenshots (null when it has them). */
  reason: string | null;
}

/** A run left out because it cannot be read or ended in an infra error. */
export interface SkippedRun {
  kind: 'skipped';
  run_id: string;
  code: string;
  reason: string;
}

/** What exportRoot() did. */
export interface ExportResult {
  paths: ExportPaths;
  lines: number;
  images: number;
  exported: ExportedRun[];
  skipped: SkippedRun[];
  /** Runs found but not selected by the filters. */
  filteredOut: number;
  durationMs: number;
}

const posix = (p: string) => p.split(sep).join('/');

/** Where the export goes for `out` (a .jsonl FILE or a DIR) and `root`. */
export function exportPaths(root: string, out: string | undefined): ExportPaths {
  const target = resolve(out ?? join(dirname(resolve(root)), `${basename(resolve(root))}-export`));
  if (target.endsWith('.jsonl')) {
    const stem = basename(target, '.jsonl');
    return { jsonl: target, images: join(dirname(target), `${stem}.images`), manifest: join(dirname(target), `${stem}.export.json`) };
  }
  return { jsonl: join(target, EXPORT_JSONL), images: join(target, EXPORT_IMAGES), manifest: join(target, EXPORT_MANIFEST) };
}

/** EXPORT_ERR_OUT_IN_ROOT / EXPORT_ERR_OUT_EXISTS when the export cannot go to `paths`. */
async function checkOut(root: string, out: string | undefined, paths: ExportPaths): Promise<void> {
  const within = (p: string) => p === root || p.startsWith(`${root}${sep}`);
  if ([paths.jsonl, paths.images, paths.manifest].some(within)) {
    throw new VncuaError('EXPORT_ERR_OUT_IN_ROOT', `--out ${dirname(paths.jsonl)} is inside ROOT ${root}, which vncua export never modifies; give a path outside it.`, {
      details: { root, out: paths.jsonl },
    });
  }
  const isFile = resolve(out ?? '').endsWith('.jsonl');
  if (isFile) {
    for (const p of [paths.jsonl, paths.images, paths.manifest]) {
      if ((await stat(p).catch(() => null)) !== null) {
        throw new VncuaError('EXPORT_ERR_OUT_EXISTS', `${p} already exists; nothing was written: give another --out.`, { details: { path: p } });
      }
    }
    return;
  }
  const dir = dirname(paths.jsonl);
  const st = await stat(dir).catch(() => null);
  if (st === null) return;
  const names = st.isDirectory() ? await readdir(dir).catch(() => ['?']) : ['?'];
  if (names.length > 0) {
    throw new VncuaError(
      'EXPORT_ERR_OUT_EXISTS',
      `${dir} ${st.isDirectory() ? `is not empty (${names.length} entr${names.length === 1 ? 'y' : 'ies'})` : 'is a file'}; nothing was written: give a new or empty directory, or --out FILE.jsonl.`,
      { details: { path: dir } },
    );
  }
}

/** The task fields of a run (task.json: ours, or uitask's keys), with the score's id and group. */
async function taskOf(dir: string, score: RunScore): Promise<ExportLine['task']> {
  let data: Record<string, unknown> = {};
  try {
    const d = JSON.parse(await readFile(join(dir, TASK_FILE), 'utf8')) as unknown;
    if (typeof d === 'object' && d !== null && !Array.isArray(d)) data = d as Record<string, unknown>;
  } catch {
    // No task.json (a run of vncua run, or uitask's): the goal and URL are unknown.
  }
  const str = (...keys: string[]) => {
    for (const k of keys) if (typeof data[k] === 'string') return data[k] as string;
    return null;
  };
  return { id: score.task_id, goal: str('goal', 'ques', 'task', 'instruction'), group: score.group, url: str('url', 'web') };
}

const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** What a model agent recorded in an entry's meta (byom/model-agent.ts, the adapters' attachMeta), or null. */
export function modelOf(meta: Record<string, unknown> | undefined): ExportLine['model'] {
  if (!meta) return null;
  const messages = [...strings(meta.model_text), ...strings(meta.thought), ...strings(meta.description)];
  const reasoning = strings(meta.reasoning);
  const calls = modelCallsOf(meta);
  if (messages.length === 0 && reasoning.length === 0 && calls.length === 0) return null;
  let tokens: { input: number | null; output: number | null; total: number | null } | null = null;
  const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
  for (const c of calls) {
    // The adapters' normalized tokens (the whole prompt, cache included) when recorded, else the API's usage names.
    const t = callTokens(c);
    const u = c.usage as Record<string, unknown> | undefined;
    if (!t && (typeof u !== 'object' || u === null)) continue;
    const input = t ? t.input : (num(u!.input_tokens) ?? num(u!.prompt_tokens));
    const output = t ? t.output : (num(u!.output_tokens) ?? num(u!.completion_tokens));
    const total = t ? t.input + t.output : (num(u!.total_tokens) ?? (input !== null || output !== null ? (input ?? 0) + (output ?? 0) : null));
    tokens ??= { input: null, output: null, total: null };
    tokens = { input: add(tokens.input, input), output: add(tokens.output, output), total: add(tokens.total, total) };
  }
  const latencies = calls.map((c) => num(c.latency_ms)).filter((x): x is number => x !== null);
  const costs = calls.map(callCost);
  const cost = calls.length > 0 && costs.every((c) => c !== null) ? roundUsd(costs.reduce((s: number, c) => s + c!, 0)) : null;
  return { messages, reasoning, calls, tokens, latency_ms: latencies.length === 0 ? null : latencies.reduce((s, x) => s + x, 0), cost_usd: cost };
}

/** A run's images: per entry index, the shot (paths relative to `base`), or the reason there are none. */
interface RunShots {
  source: 'process' | 'rendered' | null;
  reason: string | null;
  /** Directory the shots' before/after paths are relative to. */
  base: string;
  byIndex: Map<number, ActionShot>;
  warnings: string[];
}

async function readShots(dir: string): Promise<ActionScreenshotsFile> {
  return JSON.parse(await readFile(join(dir, ACTION_SCREENSHOTS_JSON), 'utf8')) as ActionScreenshotsFile;
}

/** How rendering a run went (renderAll): where its output is, or why there is none. */
type Rendered = { ok: true; dir: string } | { ok: false; reason: string };

const NO_SOURCE = 'the run has no vncua process output (action_screenshots.json) and no recording/ to render one from';

/** Whether a run's images come from vncua process's complete output, are to be rendered from recording/, or cannot be had. */
async function shotsPlan(dir: string, traceFile: string, entries: number): Promise<'process' | 'render' | 'none'> {
  if (await isComplete(dir, entries, traceFile)) return 'process';
  const rec = await stat(join(dir, 'recording')).catch(() => null);
  return rec?.isDirectory() ? 'render' : 'none';
}

/** The run's images: vncua process's complete output, else what renderAll() rendered from recording/, else none (with the reason). */
async function runShots(dir: string, traceFile: string, entries: number, rendered: Rendered | undefined): Promise<RunShots> {
  const shots = (f: ActionScreenshotsFile, source: 'process' | 'rendered', base: string): RunShots => ({
    source,
    reason: null,
    base,
    byIndex: new Map(f.actions.map((a) => [a.index, a])),
    warnings: f.warnings.map((w) => w.code),
  });
  const none = (reason: string): RunShots => ({ source: null, reason, base: dir, byIndex: new Map(), warnings: [] });
  if (rendered === undefined) {
    if ((await shotsPlan(dir, traceFile, entries)) !== 'process') return none(NO_SOURCE);
    try {
      return shots(await readShots(dir), 'process', dir);
    } catch (e) {
      return none(`its action_screenshots.json cannot be read: ${(e as Error).message}`);
    }
  }
  if (!rendered.ok) return none(rendered.reason);
  return shots(await readShots(rendered.dir), 'rendered', rendered.dir);
}

/**
 * Render the runs that need it (no complete vncua process output, a recording) with the post-processor,
 * `jobs` worker processes at a time, each into its own directory under `stage` (never into the run).
 */
async function renderAll(
  runs: ReadonlyArray<{ dir: string; traceFile: string; entries: number }>,
  stage: string,
  jobs: number,
  signal: AbortSignal | undefined,
): Promise<Map<string, Rendered>> {
  const out = new Map<string, Rendered>();
  const todo: RunJob[] = [];
  for (const [k, r] of runs.entries()) {
    const plan = await shotsPlan(r.dir, r.traceFile, r.entries);
    if (plan === 'none') out.set(r.dir, { ok: false, reason: NO_SOURCE });
    if (plan === 'render') todo.push({ runDir: r.dir, options: { outputDir: join(stage, String(k)), overwrite: true } });
  }
  const res = await processRuns(todo, { jobs, ...(signal ? { signal } : {}) });
  for (const [k, o] of res.runs.entries()) {
    if (o.ok) out.set(o.runDir, { ok: true, dir: todo[k]!.options.outputDir! });
    else if (o.error.code === 'PROCESS_ERR_WRITE') throw writeError(todo[k]!.options.outputDir!, new Error(o.error.message));
    else out.set(o.runDir, { ok: false, reason: `its recording could not be rendered: ${o.error.code}: ${o.error.message}` });
  }
  return out;
}

function writeError(path: string, cause: unknown): VncuaError {
  if (isVncuaError(cause, 'EXPORT_ERR_WRITE')) return cause;
  return new VncuaError('EXPORT_ERR_WRITE', `Could not write ${path}: ${(cause as Error)?.message ?? String(cause)}.`, { cause, details: { path } });
}

/** The lines of one run; images are copied (or moved, when rendered) into `imagesDir`. */
async function runLines(
  root: string,
  dir: string,
  score: RunScore,
  paths: ExportPaths,
  runKey: string,
  trace: ReadTrace,
  rendered: Rendered | undefined,
): Promise<{ lines: ExportLine[]; images: number; run: ExportedRun }> {
  const task = await taskOf(dir, score);
  const shots = await runShots(dir, basename(trace.path), trace.entries.length, rendered);
  const runImages = join(paths.images, ...runKey.split('/'));
  const outBase = dirname(paths.jsonl);
  let images = 0;
  try {
    const place = async (from: string | null): Promise<string | null> => {
      if (from === null) return null;
      const to = join(runImages, basename(from));
      try {
        await mkdir(runImages, { recursive: true });
        // A rendered image is ours to move; one of vncua process's is copied (ROOT is never modified).
        if (shots.source === 'rendered') await rename(join(shots.base, from), to);
        else await copyFile(join(shots.base, from), to, constants.COPYFILE_FICLONE);
      } catch (e) {
        throw writeError(to, e);
      }
      images++;
      return posix(relative(outBase, to));
    };
    const lines: ExportLine[] = [];
    const successIndex = score.success_index;
    for (const e of trace.entries) {
      const shot = shots.byIndex.get(e.index);
      const [before, after] = await Promise.all([place(shot?.before ?? null), place(shot?.after ?? null)]);
      lines.push(lineOf(root, dir, score, task, trace.entries.length, e, successIndex, shots, shot, before, after));
    }
    return { lines, images, run: { kind: 'exported', run_id: score.dir, steps: lines.length, screenshots: shots.source, reason: shots.reason } };
  } finally {
    if (shots.source === 'rendered') await rm(shots.base, { recursive: true, force: true }).catch(() => {});
  }
}

function lineOf(
  _root: string,
  dir: string,
  score: RunScore,
  task: ExportLine['task'],
  count: number,
  e: TraceEntry,
  successIndex: number | null,
  shots: RunShots,
  shot: ActionShot | undefined,
  before: string | null,
  after: string | null,
): ExportLine {
  const u = toUitaskEntry(e);
  const error = 'error' in e && e.error ? { code: e.error.code, message: e.error.message } : null;
  let reason: string | null = null;
  if (before === null || after === null) {
    reason =
      shots.reason ??
      (shot === undefined
        ? `the ${shots.source === 'process' ? 'vncua process output' : 'rendering'} has no entry ${e.index}`
        : `no ${before === null ? (after === null ? 'before or after' : 'before') : 'after'} image: the action has no known time in the recording, or lies before its first complete frame${shots.warnings.length ? ` (warnings: ${[...new Set(shots.warnings)].join(', ')})` : ''}`);
  }
  return {
    version: 1,
    run_id: score.dir,
    run_dir: dir,
    agent: score.agent,
    resolution: score.resolution,
    repeat: score.repeat,
    task,
    step_index: e.index,
    step_count: count,
    action: e.action,
    actor: e.actor === 'human' ? 'human' : 'agent',
    params: e.params as Record<string, unknown>,
    call: apiCall(e),
    uitask: 'entry' in u ? { action: u.entry.action, params: u.entry.params, task_marked_complete: u.entry.task_marked_complete } : null,
    uitask_reason: 'issue' in u ? `${u.issue.field}: ${u.issue.problem}` : null,
    started_at: e.started_at ?? null,
    ended_at: e.ended_at ?? null,
    duration_ms: e.duration_ms ?? null,
    verdict: {
      task_marked_complete: e.task_marked_complete ?? null,
      first_success: successIndex !== null && e.index === successIndex,
      error,
      success_check: e.success_check ?? null,
    },
    run_verdict: {
      status: score.status === 'invalid' ? 'unknown' : score.status,
      success: score.success,
      success_index: score.success_index,
      finish_index: score.finish_index,
      proper_stop: score.proper_stop,
      complete: score.complete,
      steps: score.steps_performed,
      duration_ms: score.duration_ms,
      error: score.error,
    },
    model: modelOf(e.meta),
    meta: e.meta ?? null,
    screenshot_before: before,
    screenshot_after: after,
    screenshot_source: before === null && after === null ? null : shots.source,
    screenshot_reason: reason,
    screenshot_before_stale: before !== null && shot?.before_stale ? (shot.before_stale_reason ?? null) : null,
    screenshot_after_stale: after !== null && shot?.after_stale ? (shot.after_stale_reason ?? null) : null,
    width: before !== null || after !== null ? (shot?.width ?? null) : null,
    height: before !== null || after !== null ? (shot?.height ?? null) : null,
  };
}

/** Export every selected run under `root`; see the module comment. */
export async function exportRoot(options: ExportOptions): Promise<ExportResult> {
  const t0 = performance.now();
  const root = resolve(options.root);
  const paths = exportPaths(root, options.out);
  const rootStat = await stat(root).catch((e: NodeJS.ErrnoException) => e);
  if (rootStat instanceof Error || !rootStat.isDirectory()) {
    const why = rootStat instanceof Error ? (rootStat.code ?? rootStat.message) : 'not a directory';
    throw new VncuaError('EXPORT_ERR_NO_RUNS', `Cannot read ROOT ${root} (${why}); give the --out directory of vncua eval.`, { details: { root } });
  }
  await checkOut(root, options.out, paths);
  const dirs = await findRunDirs(root);
  if (dirs.length === 0) {
    throw new VncuaError('EXPORT_ERR_NO_RUNS', `No run directories under ${root} (task.json, result.json or a trace); give the --out directory of vncua eval.`, {
      details: { root },
    });
  }
  const pick = (list: readonly string[] | undefined, v: string) => !list || list.length === 0 || list.includes(v);
  const selected: RunScore[] = [];
  const skipped: SkippedRun[] = [];
  let filteredOut = 0;
  for (const d of dirs) {
    options.signal?.throwIfAborted();
    const s = await scoreRunDir(root, d);
    if (!pick(options.agents, s.agent) || !pick(options.groups, s.group) || !pick(options.resolutions, s.resolution)) {
      filteredOut++;
      continue;
    }
    if (s.invalid) skipped.push({ kind: 'skipped', run_id: s.dir, code: s.invalid.code, reason: s.invalid.message });
    else if (s.infra_error) {
      skipped.push({
        kind: 'skipped',
        run_id: s.dir,
        code: s.error?.code ?? 'EVAL_ERR_DESKTOP_LOST',
        reason: `an infra error, not the agent's doing: ${s.error?.message ?? 'no result'}`,
      });
    } else if (options.successful && !s.success) filteredOut++;
    else selected.push(s);
  }
  if (selected.length === 0 && skipped.length === 0) {
    const f = [
      options.successful ? '--successful' : '',
      ...(options.agents ?? []).map((a) => `--agent ${a}`),
      ...(options.groups ?? []).map((g) => `--group ${g}`),
      ...(options.resolutions ?? []).map((r) => `--resolution ${r}`),
    ].filter(Boolean);
    throw new VncuaError('EXPORT_ERR_NO_RUNS', `None of the ${dirs.length} run(s) under ${root} passes the filters (${f.join(' ')}); nothing was written.`, {
      details: { root, runs: dirs.length, filters: f },
    });
  }
  for (const s of skipped) options.onRun?.(s);

  try {
    await mkdir(dirname(paths.jsonl), { recursive: true });
  } catch (e) {
    throw writeError(dirname(paths.jsonl), e);
  }
  // The traces (a run that changed since it was scored and cannot be read now is skipped), then the images to render.
  const skip = (s: RunScore, e: unknown) => {
    const { code, message } = errorInfo(e, 'TRACE_ERR_INVALID');
    const sk: SkippedRun = { kind: 'skipped', run_id: s.dir, code, reason: message };
    skipped.push(sk);
    options.onRun?.(sk);
  };
  const readable: Array<{ s: RunScore; dir: string; trace: ReadTrace }> = [];
  for (const s of selected) {
    const dir = join(root, ...s.dir.split('/'));
    try {
      readable.push({ s, dir, trace: await readTrace(dir) });
    } catch (e) {
      skip(s, e);
    }
  }
  const stage = join(paths.images, `.render-${process.pid}`);
  const tmp = `${paths.jsonl}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w').catch((e: unknown) => {
    throw writeError(tmp, e);
  });
  const exported: ExportedRun[] = [];
  let lines = 0;
  let images = 0;
  try {
    const rendered = await renderAll(
      readable.map((r) => ({ dir: r.dir, traceFile: basename(r.trace.path), entries: r.trace.entries.length })),
      stage,
      options.jobs ?? 1,
      options.signal,
    );
    for (const { s, dir, trace } of readable) {
      options.signal?.throwIfAborted();
      const runKey = s.dir === '.' ? basename(root) : s.dir;
      let r: Awaited<ReturnType<typeof runLines>>;
      try {
        r = await runLines(root, dir, s, paths, runKey, trace, rendered.get(dir));
      } catch (e) {
        if (isVncuaError(e, 'EXPORT_ERR_WRITE')) throw e;
        // The run changed under us or its files could not be read after all: listed, the others go on.
        skip(s, e);
        continue;
      }
      try {
        if (r.lines.length > 0) await fh.write(`${r.lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
      } catch (e) {
        throw writeError(tmp, e);
      }
      lines += r.lines.length;
      images += r.images;
      exported.push(r.run);
      options.onRun?.(r.run);
    }
  } finally {
    await fh.close().catch(() => {});
    await rm(stage, { recursive: true, force: true }).catch(() => {});
  }
  try {
    await rename(tmp, paths.jsonl);
    const manifest = {
      version: 1,
      root,
      generated_at: new Date().toISOString(),
      jsonl: posix(relative(dirname(paths.manifest), paths.jsonl)),
      schema: 'schemas/export-line.schema.json (in the vncua package)',
      filters: {
        successful: options.successful === true,
        agents: [...(options.agents ?? [])],
        groups: [...(options.groups ?? [])],
        resolutions: [...(options.resolutions ?? [])],
      },
      lines,
      images,
      runs: exported.map(({ kind: _k, ...r }) => r),
      skipped: skipped.map(({ kind: _k, ...r }) => r),
      filtered_out: filteredOut,
    };
    const mtmp = `${paths.manifest}.tmp-${process.pid}`;
    const mh = await open(mtmp, 'w');
    await mh.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
    await mh.close();
    await rename(mtmp, paths.manifest);
  } catch (e) {
    throw writeError(paths.manifest, e);
  }
  return { paths, lines, images, exported, skipped, filteredOut, durationMs: performance.now() - t0 };
}
