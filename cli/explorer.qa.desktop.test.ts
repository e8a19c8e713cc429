/**
 * `vncua run --agent explorer` on the explorer's test app (agents/explorer/test-pages/app) on a real desktop: the
 * explorer finds every planted problem (planted.ts), each with its step and a screenshot file that exists;
 * qa-report.json validates against the committed JSON Schema; qa-report.md and .html mention each finding. A page
 * that sends itself to another host: the explorer's navigation guard blocks it, and that is a blocked_navigation.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../harness/test-helpers/files.ts';
import { escapeHtml, escapeMd } from '../agents/explorer/report/render.ts';
import type { QaReport } from '../agents/explorer/report/schema.ts';
import { findingFor, PLANTED } from '../agents/explorer/test-pages/planted.ts';
import { serveTestApp, type TestApp } from '../agents/explorer/test-pages/server.ts';
import { startStaticServer, type StaticServer } from '../harness/static-server.ts';
import { TEST_PAGES } from '../agents/explorer/test-helpers.ts';
import { runAgentCommand } from './run.ts';

const SCHEMA = fileURLToPath(new URL('../agents/explorer/report/qa-report.schema.json', import.meta.url));

let app: TestApp;
let pages: StaticServer;
const dirs: Array<{ remove(): Promise<void> }> = [];

beforeAll(async () => {
  app = await serveTestApp();
  pages = await startStaticServer({ root: TEST_PAGES });
});

afterAll(async () => {
  await app?.close();
  await pages?.close();
  for (const d of dirs) await d.remove();
});

describe('vncua run --agent explorer on the test app', () => {
  it('finds every planted problem with its step and screenshot; the QA report validates and names each finding', async () => {
    const out = await tempOutputDir('vncua-explorer-qa-');
    dirs.push(out);
    const r = await runAgentCommand({ agent: 'explorer', url: app.url, maxSteps: 80, out: join(out.dir, 'run'), live: false, args: ['--seed', '1', '--budget-ms', '120000'] });
    expect(r.result.status, JSON.stringify(r.result.error)).toBe('finished');
    const report = JSON.parse(await readFile(join(r.outputDir, 'qa-report.json'), 'utf8')) as QaReport;
    const why = JSON.stringify(report.findings.map((f) => [f.kind, f.step, f.message]));
    for (const p of PLANTED) {
      const f = findingFor(p, report.findings);
      expect(f, `${p.id} (${p.how}) not found in ${why}`).toBeDefined();
      expect(f!.step, p.id).toBeGreaterThan(0);
      expect(f!.step, p.id).toBeLessThanOrEqual(report.totals.steps);
      expect(f!.screenshot, p.id).toBeDefined();
      expect(existsSync(join(r.outputDir, f!.screenshot!)), f!.screenshot).toBe(true);
    }
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    const validate = ajv.compile(JSON.parse(await readFile(SCHEMA, 'utf8')));
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    const md = await readFile(join(r.outputDir, 'qa-report.md'), 'utf8');
    const html = await readFile(join(r.outputDir, 'qa-report.html'), 'utf8');
    for (const f of report.findings) {
      expect(md).toContain(escapeMd(f.message));
      expect(html).toContain(escapeHtml(f.message));
    }
    expect(report.links.trace).toBe('execution.json');
    expect(report.totals.coveragePct).toBeGreaterThan(0);
  }, 300_000);

  it("a navigation to another host, blocked by the explorer's guard, is a blocked_navigation finding", async () => {
    const out = await tempOutputDir('vncua-explorer-qa-');
    dirs.push(out);
    const url = `${pages.url}leave.html`;
    const r = await runAgentCommand({ agent: 'explorer', url, maxSteps: 20, out: join(out.dir, 'run'), live: false, args: ['--seed', '1', '--stuck-after', '2'] });
    expect(r.result.status, JSON.stringify(r.result.error)).toBe('finished');
    const report = JSON.parse(await readFile(join(r.outputDir, 'qa-report.json'), 'utf8')) as QaReport;
    const blocked = report.findings.filter((f) => f.kind === 'blocked_navigation');
    const target = `http://localhost:${new URL(pages.url).port}/static/index.html`;
    expect(
      blocked.map((f) => f.message),
      JSON.stringify(report.findings),
    ).toContain(`blocked navigation to ${target}`);
    // Seen over CDP and in the trace's meta.domain_blocked: one finding.
    expect(blocked.filter((x) => x.message.endsWith(target))).toHaveLength(1);
    const f = blocked.find((x) => x.message.endsWith(target))!;
    expect(f.step).toBeGreaterThan(0);
    expect(existsSync(join(r.outputDir, f.screenshot!))).toBe(true);
    expect(report.totals.byKind.blocked_navigation).toBe(blocked.length);
  }, 300_000);
});
