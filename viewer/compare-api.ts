/**
 * The compare view's API (`vncua serve`, viewer/server.ts dispatches here):
 *
 *   GET api/compare?a=DIR&b=DIR   both runs (as api/run gives them) and their steps aligned (viewer/align.ts)
 *   GET api/related?dir=DIR       the other runs of the same task under ROOT (other agents, repeats, suites)
 *
 * Two runs of different tasks are not compared (SERVE_ERR_COMPARE_MISMATCH, HTTP 400).
 */
import { VncuaError } from '../harness/errors.ts';
import { type AlignedRow, type RowKind, type ScreenSize, alignSteps } from './align.ts';
import type { ListedRun, RunCatalog, RunDetail } from './runs.ts';

/** What api/compare answers. */
export interface Comparison {
  a: RunDetail;
  b: RunDetail;
  rows: AlignedRow[];
  /** How many rows of each kind. */
  counts: Record<RowKind, number>;
}

/** What api/related answers. */
export interface RelatedRuns {
  dir: string;
  task_id: string | null;
  /** The other runs of that task: the same suite first, then by agent, resolution and repeat. */
  runs: ListedRun[];
}

/** `1280x800` → { width, height } (null for anything else). */
export function screenOf(resolution: string | undefined): ScreenSize | null {
  const m = /^(\d+)x(\d+)$/.exec(resolution ?? '');
  return m ? { width: Number(m[1]), height: Number(m[2]) } : null;
}

/** Two runs and their aligned steps; SERVE_ERR_COMPARE_MISMATCH when they are runs of different tasks. */
export function compareRuns(a: RunDetail, b: RunDetail): Comparison {
  const ta = a.row?.task_id ?? null;
  const tb = b.row?.task_id ?? null;
  if (ta !== tb) {
    throw new VncuaError(
      'SERVE_ERR_COMPARE_MISMATCH',
      `${a.dir} is a run of task "${ta}" and ${b.dir} of task "${tb}": a comparison aligns the steps of one task; pick two runs with the same task id.`,
      { details: { a: a.dir, b: b.dir, taskA: ta, taskB: tb } },
    );
  }
  const rows = alignSteps(a.entries, b.entries, { a: screenOf(a.row?.resolution), b: screenOf(b.row?.resolution) });
  const counts: Record<RowKind, number> = { same: 0, similar: 0, different: 0, only_a: 0, only_b: 0 };
  for (const r of rows) counts[r.kind]++;
  return { a, b, rows, counts };
}

/** The other runs of `dir`'s task (same task id; the same task text when both have one). */
export async function relatedRuns(catalog: RunCatalog, dir: string): Promise<RelatedRuns> {
  await catalog.resolveRun(dir);
  const me = await catalog.row(dir);
  if (!me) return { dir, task_id: null, runs: [] };
  const all = (await catalog.list()).runs;
  const runs = all
    .filter((r) => r.dir !== dir && r.task_id === me.task_id && (r.task === null || me.task === null || r.task === me.task))
    .sort(
      (x, y) =>
        Number(y.suite === me.suite) - Number(x.suite === me.suite) ||
        x.agent.localeCompare(y.agent) ||
        x.resolution.localeCompare(y.resolution) ||
        x.repeat - y.repeat ||
        x.dir.localeCompare(y.dir),
    );
  return { dir, task_id: me.task_id, runs };
}

/**
 * Answer api/compare and api/related (null for any other path). `detail` gives a run as api/run
 * does; the answer is [HTTP status, body].
 */
export async function compareApi(path: string, q: URLSearchParams, catalog: RunCatalog, detail: (dir: string) => Promise<RunDetail>): Promise<[number, unknown] | null> {
  if (path === 'api/related') return [200, await relatedRuns(catalog, q.get('dir') ?? '')];
  if (path !== 'api/compare') return null;
  const a = q.get('a');
  const b = q.get('b');
  if (!a || !b) return [400, { code: 'SERVE_ERR_BAD_REQUEST', message: 'api/compare needs a=<run dir> and b=<run dir>.' }];
  const [da, db] = await Promise.all([detail(a), detail(b)]);
  try {
    return [200, compareRuns(da, db)];
  } catch (e) {
    if (e instanceof VncuaError && e.code === 'SERVE_ERR_COMPARE_MISMATCH') return [400, { code: e.code, message: e.message }];
    throw e;
  }
}
