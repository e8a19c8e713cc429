/**
 * What `vncua serve` lists and shows: the runs under ROOT scored by eval/score.ts (the same discovery and
 * metrics as `vncua score`; nothing is written), the search text of each run (task text and action params),
 * filters, and one run's detail (trace entries with their meta, result, the recording's extent and damage).
 */
import { readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { VncuaError, isVncuaError } from '../harness/errors.ts';
import { readTrace } from '../harness/trace/reader.ts';
import type { TraceEntry } from '../harness/trace/schema.ts';
import { findRunDirs, scoreRunDir, type RunScore } from '../eval/score.ts';
import { aggregate } from '../eval/score.ts';
import { readRecording } from '../recorder/replay/reader.ts';
import { recordingExtent, type RecordingExtent } from './keyframes.ts';

/** One listed run: its score row, plus the suite it belongs to and its task text. */
export interface ListedRun extends RunScore {
  /** The directory under ROOT above `<agent>/<W>_<H>/<task id>[/<n>]` ('.' when ROOT is the eval --out itself). */
  suite: string;
  /** The task's text (task.json goal / task / instruction), or null. */
  task: string | null;
  /** The run has a recording/ directory (frames can be shown). */
  recorded: boolean;
}

/** Filters of the run list (each optional; `q` searches task text, task id and action params, case-insensitive). */
export interface RunFilter {
  agent?: string;
  resolution?: string;
  group?: string;
  status?: string;
  suite?: string;
  q?: string;
}

/** The run list answer. */
export interface RunList {
  root: string;
  /** Every value each filter can take (over all runs). */
  facets: { agent: string[]; resolution: string[]; group: string[]; status: string[]; suite: string[] };
  /** The runs that pass the filters. */
  runs: ListedRun[];
  /** How many runs ROOT holds in all. */
  total: number;
  /** eval/score.ts's aggregate per agent over the runs shown. */
  by_agent: Array<{ agent: string } & ReturnType<typeof aggregate>>;
  /** Set when ROOT holds no run: the code and a message for the page. */
  empty: { code: 'SERVE_ERR_NO_RUNS'; message: string } | null;
}

interface Scanned {
  at: number;
  runs: Array<ListedRun & { search: string; abs: string }>;
}

const posix = (p: string) => p.split(sep).join('/');

/** The run catalogue of one ROOT, rescanned when older than `ttlMs`. */
export class RunCatalog {
  readonly root: string;
  private scanned: Scanned | null = null;
  private scanning: Promise<Scanned> | null = null;
  private readonly ttlMs: number;

  constructor(root: string, opts: { ttlMs?: number } = {}) {
    this.root = resolve(root);
    this.ttlMs = opts.ttlMs ?? 2000;
  }

  private async scan(): Promise<Scanned> {
    if (this.scanned && performance.now() - this.scanned.at < this.ttlMs) return this.scanned;
    this.scanning ??= (async () => {
      const dirs = await findRunDirs(this.root);
      const runs: Scanned['runs'] = [];
      for (const d of dirs) {
        const s = await scoreRunDir(this.root, d);
        const task = await readTaskText(d);
        let params = '';
        try {
          params = (await readTrace(d)).entries.map((e) => `${e.action} ${JSON.stringify(e.params)}`).join('\n');
        } catch {
          // an unreadable trace is listed as invalid by scoreRunDir
        }
        const recorded = (await stat(join(d, 'recording')).catch(() => null))?.isDirectory() === true;
        const row: ListedRun = { ...s, suite: suiteOf(s.dir, s.resolution !== 'unknown', s.repeat), task, recorded };
        runs.push({ ...row, abs: d, search: `${s.task_id}\n${task ?? ''}\n${params}`.toLowerCase() });
      }
      runs.sort(
        (a, b) =>
          a.suite.localeCompare(b.suite) || a.agent.localeCompare(b.agent) || a.resolution.localeCompare(b.resolution) || a.task_id.localeCompare(b.task_id) || a.repeat - b.repeat,
      );
      this.scanned = { at: performance.now(), runs };
      return this.scanned;
    })().finally(() => {
      this.scanning = null;
    });
    return this.scanning;
  }

  /** Forget the last scan: the next call scans ROOT again (a live run ended, so its row changed). */
  invalidate(): void {
    this.scanned = null;
  }

  /** The runs that pass `f`. */
  async list(f: RunFilter = {}): Promise<RunList> {
    const all = (await this.scan()).runs;
    const q = f.q?.trim().toLowerCase() ?? '';
    const shown = all.filter(
      (r) =>
        (!f.agent || r.agent === f.agent) &&
        (!f.resolution || r.resolution === f.resolution) &&
        (!f.group || r.group === f.group) &&
        (!f.status || statusOf(r) === f.status || r.status === f.status) &&
        (!f.suite || r.suite === f.suite) &&
        (!q || q.split(/\s+/).every((w) => r.search.includes(w))),
    );
    const uniq = (k: (r: ListedRun) => string) => [...new Set(all.map(k))].sort();
    const agents = [...new Set(shown.map((r) => r.agent))].sort();
    return {
      root: this.root,
      facets: { agent: uniq((r) => r.agent), resolution: uniq((r) => r.resolution), group: uniq((r) => r.group), status: uniq(statusOf), suite: uniq((r) => r.suite) },
      runs: shown.map(({ search: _s, abs: _a, ...r }) => r),
      total: all.length,
      by_agent: agents.map((agent) => ({ agent, ...aggregate(shown.filter((r) => r.agent === agent)) })),
      empty:
        all.length === 0
          ? {
              code: 'SERVE_ERR_NO_RUNS',
              message: `No run under ${this.root}: a run directory holds task.json, result.json or a trace (execution.json, partial_execution.json). Give the --out directory of vncua eval.`,
            }
          : null,
    };
  }

  /** The absolute directory of the run named `dir` (relative to ROOT, as listed); SERVE_ERR_RUN_NOT_FOUND otherwise. */
  async resolveRun(dir: string): Promise<string> {
    const hit = (await this.scan()).runs.find((r) => r.dir === dir);
    if (hit) return hit.abs;
    // A run that appeared since the last scan.
    this.scanned = null;
    const again = (await this.scan()).runs.find((r) => r.dir === dir);
    if (again) return again.abs;
    throw new VncuaError('SERVE_ERR_RUN_NOT_FOUND', `No run "${dir}" under ${this.root}.`, { details: { dir } });
  }

  /** The listed row of a run. */
  async row(dir: string): Promise<ListedRun | null> {
    const hit = (await this.scan()).runs.find((r) => r.dir === dir);
    if (!hit) return null;
    const { search: _s, abs: _a, ...r } = hit;
    return r;
  }
}

/** success / failure / error / partial / invalid, or the stop status (needs_human, cost_cap…: eval/score.ts APART_STATUSES): the status filter's values. */
export function statusOf(r: Pick<RunScore, 'status' | 'success' | 'infra_error' | 'invalid'> & { stopped?: string | null }): string {
  if (r.invalid) return 'invalid';
  if (r.infra_error) return 'infra_error';
  if (r.stopped) return r.stopped;
  if (r.success) return 'success';
  if (r.status === 'partial') return 'partial';
  return 'failure';
}

/** The suite of a run directory: what is above `<agent>/<W>_<H>/<task id>[/<n>]`. */
function suiteOf(dir: string, layout: boolean, repeat: number): string {
  const parts = dir.split('/');
  if (!layout) return parts.length > 1 ? parts.slice(0, -2).join('/') || '.' : '.';
  const tail = /^[1-9]\d*$/.test(parts[parts.length - 1]!) && repeat > 1 ? 4 : 3;
  return parts.slice(0, Math.max(0, parts.length - tail)).join('/') || '.';
}

async function readTaskText(dir: string): Promise<string | null> {
  try {
    const data = JSON.parse(await readFile(join(dir, 'task.json'), 'utf8')) as unknown;
    if (typeof data === 'string') return data;
    if (typeof data === 'object' && data !== null) {
      for (const k of ['goal', 'task', 'ques', 'instruction']) {
        const v = (data as Record<string, unknown>)[k];
        if (typeof v === 'string') return v;
      }
    }
  } catch {
    // no task text
  }
  return null;
}

/** One run as the trace viewer shows it. */
export interface RunDetail {
  dir: string;
  row: ListedRun | null;
  entries: TraceEntry[];
  traceError: { code: string; message: string } | null;
  result: unknown;
  /** The recording's extent and damage (null without a recording). */
  recording: {
    start: number | null;
    end: number | null;
    /** The reader's warnings (damage found in the files, before any decoding). */
    warnings: Array<{ code: string; message: string }>;
    /** Where the server data stops being usable, when it does (the earliest over the connections). */
    damage: { code: 'SERVE_ERR_RECORDING_DAMAGED'; until: number; reason: string; message: string } | null;
  } | null;
  noRecording: { code: 'SERVE_ERR_NO_RECORDING'; message: string } | null;
}

/**
 * Read one run for the viewer (never writes). `extent` gives the recording's extent and damage (the
 * server passes its seek index's, which reads the recording once for both); by default the recording
 * is read here.
 */
export async function readRunDetail(abs: string, dir: string, row: ListedRun | null, extent?: () => Promise<RecordingExtent>): Promise<RunDetail> {
  let entries: TraceEntry[] = [];
  let traceError: RunDetail['traceError'] = null;
  try {
    entries = (await readTrace(abs)).entries;
  } catch (e) {
    traceError = { code: isVncuaError(e) ? e.code : 'TRACE_ERR_INVALID', message: (e as Error).message };
  }
  let result: unknown = null;
  try {
    result = JSON.parse(await readFile(join(abs, 'result.json'), 'utf8'));
  } catch {
    // no result
  }
  const recDir = join(abs, 'recording');
  if (!(await stat(recDir).catch(() => null))?.isDirectory()) {
    return {
      dir,
      row,
      entries,
      traceError,
      result,
      recording: null,
      noRecording: {
        code: 'SERVE_ERR_NO_RECORDING',
        message: `${posix(relative(process.cwd(), recDir))} does not exist: this run was not recorded; its steps are shown without frames.`,
      },
    };
  }
  const x = extent ? await extent() : recordingExtent(await readRecording(recDir));
  return {
    dir,
    row,
    entries,
    traceError,
    result,
    recording: {
      start: x.start,
      end: x.end,
      warnings: x.warnings,
      damage: x.damage
        ? { code: 'SERVE_ERR_RECORDING_DAMAGED', until: x.damage.until, reason: x.damage.reason, message: damageMessage(x.damage.until, x.damage.reason, x.warnings) }
        : null,
    },
    noRecording: null,
  };
}

/** The page's line about damage starting at `until`. */
export function damageMessage(until: number, reason: string, warnings: ReadonlyArray<{ code: string; message: string }>): string {
  const what = reason === 'undecodable' ? 'cannot be replayed' : 'is damaged or truncated';
  const first = warnings[0];
  return `The recording ${what} from ${new Date(until).toISOString()} on: frames up to then are exact, later instants show the last frame known.${first ? ` ${first.code}: ${first.message}` : ''}`;
}
