/**
 * `writeQaReport`: qa-report.json (validated against the schema first: QA_ERR_INVALID, nothing written), qa-report.md
 * and qa-report.html into the run's output directory (QA_ERR_WRITE). The links default to the run files that exist:
 * execution.json, result.json, explorer-summary.json, the step report (action_screenshots.html, from vncua process)
 * and the recording (recording.mp4 / .webm, else the recording/ directory).
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VncuaError } from '../../../harness/errors.ts';
import type { ExplorerSummary, Finding } from '../types.ts';
import { buildQaReport, type QaLinks, type QaRunOutcome } from './build.ts';
import { renderQaHtml, renderQaMarkdown } from './render.ts';
import { qaReportSchema, type QaReport } from './schema.ts';

/** The report files' names. */
export const QA_REPORT_FILES = { json: 'qa-report.json', md: 'qa-report.md', html: 'qa-report.html' } as const;

/** The links to the run's files that exist in `dir`. */
export function findRunLinks(dir: string): QaLinks {
  const has = (name: string) => existsSync(join(dir, name));
  return {
    trace: has('execution.json') ? 'execution.json' : null,
    result: has('result.json') ? 'result.json' : null,
    stepReport: has('action_screenshots.html') ? 'action_screenshots.html' : null,
    recording: ['recording.mp4', 'recording.webm', 'recording'].find(has) ?? null,
    summary: has('explorer-summary.json') ? 'explorer-summary.json' : null,
  };
}

/** result.json's status, steps and error in `dir`, or null when it has none (or it is unreadable). */
export async function readRunOutcome(dir: string): Promise<QaRunOutcome> {
  try {
    const r = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as { status?: unknown; steps?: unknown; error?: { code?: unknown; message?: unknown } | null };
    if (typeof r.status !== 'string') return null;
    const out: NonNullable<QaRunOutcome> = { status: r.status };
    if (typeof r.steps === 'number') out.steps = r.steps;
    if (r.error && typeof r.error.code === 'string') out.error = { code: r.error.code, message: String(r.error.message ?? '') };
    return out;
  } catch {
    return null;
  }
}

/** Write qa-report.json, .md and .html into `outputDir`; resolves to the report written. */
export async function writeQaReport(outputDir: string, summary: ExplorerSummary, findings: readonly Finding[], links?: Partial<QaLinks>, run?: QaRunOutcome): Promise<QaReport> {
  const report = buildQaReport(summary, findings, { ...findRunLinks(outputDir), ...links }, run === undefined ? await readRunOutcome(outputDir) : run);
  const parsed = qaReportSchema.safeParse(report);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 20).map((i) => ({ field: i.path.join('.'), problem: i.message }));
    throw new VncuaError(
      'QA_ERR_INVALID',
      `The QA report does not match its schema (${issues.map((i) => `${i.field}: ${i.problem}`).join('; ')}); this is a bug in the explorer.`,
      { details: { issues } },
    );
  }
  const files: Array<[string, string]> = [
    [QA_REPORT_FILES.json, `${JSON.stringify(report, null, 2)}\n`],
    [QA_REPORT_FILES.md, renderQaMarkdown(report)],
    [QA_REPORT_FILES.html, renderQaHtml(report)],
  ];
  for (const [name, text] of files) {
    const path = join(outputDir, name);
    try {
      await writeFile(path, text);
    } catch (cause) {
      throw new VncuaError('QA_ERR_WRITE', `${path} could not be written (${(cause as Error).message}); check that the run directory is writable.`, { cause, details: { path } });
    }
  }
  return report;
}
