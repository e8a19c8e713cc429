/**
 * The QA part of the scores: for every run whose directory holds a qa-report.json (the explorer's, see
 * agents/explorer/report/), one row per app: its findings by kind, coverage and states, linked to qa-report.html.
 * eval/ does not import agents/, so qa-report.json is read loosely here (its schema is the explorer's); a file that
 * does not look like one is left out.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One app's QA line in the scores. */
export interface QaAppRow {
  agent: string;
  resolution: string;
  task_id: string;
  repeat: number;
  /** The explored start page. */
  url: string;
  findings: number;
  /** Findings per kind (kinds with none left out). */
  by_kind: Record<string, number>;
  /** Interactive elements acted on, of those seen, in percent. */
  coverage_pct: number;
  states: number;
  steps: number;
  /** qa-report.html relative to the scored root. */
  link: string;
}

/** The QA rows of the runs (in the runs' order); [] when no run has a qa-report.json. */
export async function readQaRows(root: string, runs: ReadonlyArray<{ agent: string; resolution: string; task_id: string; repeat: number; dir: string }>): Promise<QaAppRow[]> {
  const rows: QaAppRow[] = [];
  for (const r of runs) {
    let q: { startUrl?: unknown; totals?: { findings?: unknown; byKind?: Record<string, unknown>; coveragePct?: unknown; states?: unknown; steps?: unknown } };
    try {
      q = JSON.parse(await readFile(join(root, r.dir, 'qa-report.json'), 'utf8')) as typeof q;
    } catch {
      continue;
    }
    const t = q.totals;
    if (!t || typeof t.findings !== 'number' || typeof t.coveragePct !== 'number') continue;
    const by_kind: Record<string, number> = {};
    for (const [k, n] of Object.entries(t.byKind ?? {})) if (typeof n === 'number' && n > 0) by_kind[k] = n;
    rows.push({
      agent: r.agent,
      resolution: r.resolution,
      task_id: r.task_id,
      repeat: r.repeat,
      url: typeof q.startUrl === 'string' ? q.startUrl : '',
      findings: t.findings,
      by_kind,
      coverage_pct: t.coveragePct,
      states: typeof t.states === 'number' ? t.states : 0,
      steps: typeof t.steps === 'number' ? t.steps : 0,
      link: r.dir === '.' ? 'qa-report.html' : `${r.dir}/qa-report.html`,
    });
  }
  return rows;
}

/** "2 findings (console_error 1, http_error 1), coverage 62.5%, 4 states" */
export function qaLine(q: QaAppRow): string {
  const kinds = Object.entries(q.by_kind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return `${q.findings} finding${q.findings === 1 ? '' : 's'}${kinds ? ` (${kinds})` : ''}, coverage ${q.coverage_pct}%, ${q.states} state${q.states === 1 ? '' : 's'}`;
}
