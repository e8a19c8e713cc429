/**
 * The QA report's content, free of I/O: qa-report.json's object from the loop's summary, the findings, the run's
 * links and result.json's outcome; findings sorted and grouped by kind for the Markdown and HTML pages.
 */
import type { ExplorerSummary, Finding, FindingKind } from '../types.ts';
import { FINDING_KINDS, QA_REPORT_FORMAT, type QaReport } from './schema.ts';

/** Files of the run the report links to (paths relative to the run directory; null when absent). */
export type QaLinks = QaReport['links'];

/** result.json's part the report shows. */
export type QaRunOutcome = QaReport['run'];

/** What each kind is called in the pages. */
export const KIND_TITLES: Record<FindingKind, string> = {
  crash: 'Crashes ("Aw, Snap!")',
  frozen: 'Frozen pages',
  uncaught_exception: 'Uncaught exceptions',
  console_error: 'Console errors',
  http_error: 'HTTP errors',
  request_failed: 'Failed requests',
  blank_screen: 'Blank screens',
  blocked_navigation: 'Blocked navigations',
};

/** The findings grouped by kind, kinds in FINDING_KINDS order (empty kinds left out), each group by step. */
export function groupFindings(findings: readonly Finding[]): Array<{ kind: FindingKind; findings: Finding[] }> {
  const out: Array<{ kind: FindingKind; findings: Finding[] }> = [];
  for (const kind of FINDING_KINDS) {
    const fs = findings.filter((f) => f.kind === kind).sort((a, b) => a.step - b.step);
    if (fs.length) out.push({ kind, findings: fs });
  }
  return out;
}

/** qa-report.json's object. */
export function buildQaReport(summary: ExplorerSummary, findings: readonly Finding[], links: QaLinks, run: QaRunOutcome = null): QaReport {
  const byKind = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>;
  for (const f of findings) byKind[f.kind]++;
  const { seen, tried } = summary.coverage;
  return {
    format: QA_REPORT_FORMAT,
    startUrl: summary.startUrl,
    seed: summary.seed,
    startedAt: summary.startedAt,
    durationMs: Math.max(0, Math.round(summary.durationMs)),
    endReason: summary.endReason,
    run,
    links,
    totals: {
      steps: summary.steps.length,
      states: summary.states.length,
      findings: findings.length,
      byKind,
      // Nothing seen: fully covered when the page was explored (it has nothing to act on), 0 when it never was.
      coveragePct: seen === 0 ? (summary.steps.length === 0 && summary.endReason === 'error' ? 0 : 100) : Math.round((tried / seen) * 1000) / 10,
      unstick: summary.unstick.length,
      costUsd: summary.model.costUsd,
    },
    findings: groupFindings(findings).flatMap((g) => g.findings),
    states: summary.states,
    coverage: summary.coverage,
    unstick: summary.unstick,
    steps: summary.steps,
    model: summary.model,
  } as QaReport;
}
