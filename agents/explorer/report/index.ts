/** The explorer's QA report: qa-report.json (schema), qa-report.md and qa-report.html. */
export { buildQaReport, groupFindings, KIND_TITLES, type QaLinks, type QaRunOutcome } from './build.ts';
export { escapeHtml, escapeMd, renderQaHtml, renderQaMarkdown } from './render.ts';
export { FINDING_KINDS, QA_REPORT_FORMAT, qaReportSchema, renderQaReportJsonSchema, type QaReport } from './schema.ts';
export { findRunLinks, QA_REPORT_FILES, readRunOutcome, writeQaReport } from './write.ts';
